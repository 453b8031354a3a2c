"""DM pairing state: who is approved on each platform, and the one-time codes waiting for an admin."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class PendingPairing:
    platform: str
    user_id: str
    code: str
    expires_at: float  # wall clock (seconds)


class PairingStore(Protocol):
    async def is_paired(self, platform: str, user_id: str) -> bool: ...

    async def code_for(self, platform: str, user_id: str, new_code: str, expires_at: float, now: float) -> str:
        """The user's code still valid at `now`, or else `new_code` (valid until `expires_at`), stored in
        one transaction so two requests at once agree on one code."""
        ...

    async def approve(self, platform: str, code: str, now: float) -> str | None:
        """Approve the user a code still valid at `now` belongs to and spend the code; returns that user's
        id, or None for an unknown, spent or expired code."""
        ...

    async def pending(self, now: float) -> list[PendingPairing]:
        """Codes still valid at `now`, soonest to expire first: what an admin may approve or deny."""
        ...

    async def deny(self, platform: str, code: str) -> str | None:
        """Withdraw a pending code (the user may ask for a new one); returns whose it was, or None."""
        ...
