"""DM pairing: an unknown sender gets a one-time code; nothing runs until an admin approves it.

State lives in the store's pairing table, so it survives restarts; every change is one transaction,
so two strangers at once never lose a code.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from bot.store import PairingStore
from bot.store.pairing import PendingPairing

CODE_TTL = 3600.0
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no look-alikes (0/O, 1/I)


class Pairing:
    def __init__(self, store: PairingStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._clock = clock  # unix seconds; tests pass their own

    async def is_paired(self, platform: str, user_id: str) -> bool:
        return await self.store.is_paired(platform, user_id)

    async def code_for(self, platform: str, user_id: str) -> str:
        """The sender's pending code (a new one if none is valid), valid for an hour."""
        now = self._clock()
        code = "".join(secrets.choice(_ALPHABET) for _ in range(8))
        return await self.store.code_for(platform, user_id, code, now + CODE_TTL, now)

    async def approve(self, platform: str, code: str) -> str | None:
        """Approve a code; returns the user id it belonged to, or None if unknown or expired."""
        return await self.store.approve(platform, code.strip().upper(), self._clock())

    async def pending(self) -> list[PendingPairing]:
        return await self.store.pending(self._clock())

    async def deny(self, platform: str, code: str) -> str | None:
        """Withdraw a code; returns the user id it belonged to, or None if there is no such code."""
        return await self.store.deny(platform, code.strip().upper())
