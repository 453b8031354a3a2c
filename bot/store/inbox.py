"""Dedupe of platform events: a key remembered for a while, so a redelivered event is handled once."""

from __future__ import annotations

from typing import Protocol

DEDUPE_TTL = 7 * 86400.0  # seconds; platforms redeliver within minutes, a week is plenty


class InboxStore(Protocol):
    async def seen(self, key: str, ttl: float = DEDUPE_TTL) -> bool:
        """Record the key; True if it was already recorded and has not expired (one atomic statement)."""
        ...

    async def purge_expired(self) -> int:
        """Forget expired keys; returns how many went."""
        ...
