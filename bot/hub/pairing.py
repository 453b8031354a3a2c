"""DM pairing: an unknown sender gets a one-time code; nothing runs until an admin approves it.

State lives in the store's per-chat settings under a reserved key per platform, so it survives restarts
without a table of its own; every change is one transaction, so two strangers at once never lose a code.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from bot.store import Store

CODE_TTL = 3600.0
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no look-alikes (0/O, 1/I)


def _key(platform: str) -> str:
    return f"_pairing:{platform}"


class Pairing:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def is_paired(self, platform: str, user_id: str) -> bool:
        state = await self.store.chat_settings(_key(platform))
        return user_id in state.get("approved", [])

    async def code_for(self, platform: str, user_id: str) -> str:
        """The sender's pending code (a new one if none is valid), valid for an hour."""

        def give_code(state: dict[str, Any]) -> str:
            now = time.time()
            pending = {c: v for c, v in state.get("pending", {}).items() if v["expires"] > now}
            state["pending"] = pending
            for code, entry in pending.items():
                if entry["user_id"] == user_id:
                    return str(code)
            code = "".join(secrets.choice(_ALPHABET) for _ in range(8))
            pending[code] = {"user_id": user_id, "expires": now + CODE_TTL}
            return code

        return await self.store.change_chat_settings(_key(platform), give_code)

    async def approve(self, platform: str, code: str) -> str | None:
        """Approve a code; returns the user id it belonged to, or None if unknown or expired."""

        def take_code(state: dict[str, Any]) -> str | None:
            entry = state.get("pending", {}).pop(code.strip().upper(), None)
            if entry is None or entry["expires"] <= time.time():
                return None
            state["approved"] = sorted({*state.get("approved", []), entry["user_id"]})
            return str(entry["user_id"])

        return await self.store.change_chat_settings(_key(platform), take_code)
