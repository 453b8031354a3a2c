"""The durable inbox: dedupe of platform events, and the accepted events not answered yet.

An accepted event is written with its dedupe key in one transaction and leaves the inbox only once it is
answered, so a crash or restart loses nothing: the next start answers what is left (oldest first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

DEDUPE_TTL = 7 * 86400.0  # seconds; platforms redeliver within minutes, a week is plenty


@dataclass(frozen=True, slots=True)
class InboxEntry:
    id: int
    session: str  # the session's storage key
    event: str  # the accepted message, as the hub encoded it
    replies: tuple[str, ...] = ()  # platform ids of the reply's messages sent before the process stopped
    job: int | None = None  # a scheduled job's run (bot/store/jobs.py), not a message


class InboxStore(Protocol):
    async def seen(self, key: str, ttl: float = DEDUPE_TTL) -> bool:
        """Record the key; True if it was already recorded and has not expired (one atomic statement)."""
        ...

    async def accept(self, key: str, session: str, event: str, ttl: float = DEDUPE_TTL) -> int | None:
        """Record the dedupe key and queue the event, atomically; the entry's id, or None if the key was seen."""
        ...

    async def finish(self, session: str, entry_ids: Sequence[int]) -> None:
        """These events of the chat are answered (or dropped on purpose): they leave the inbox. Refused
        (NotOwner) when another replica owns the chat now."""
        ...

    async def replied(self, session: str, entry_id: int, message_ids: Sequence[str]) -> None:
        """The platform ids of the messages sent so far for this entry's reply, so a restart edits them
        instead of sending the reply again."""
        ...

    async def unfinished(self) -> list[InboxEntry]:
        """Accepted and not finished, oldest first: what a crash or restart left to answer."""
        ...

    async def waiting(self, session: str) -> list[InboxEntry]:
        """This session's accepted entries not finished yet, oldest first (a replica taking the chat over)."""
        ...

    async def purge_expired(self) -> int:
        """Forget expired dedupe keys; returns how many went."""
        ...
