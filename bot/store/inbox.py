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
class Accepted:
    """An entry just queued: its id, and its place in its chat's own dense sequence (1, 2, 3, … per chat, in the
    order the accepting statements committed: the order the chat's owner runs them in)."""

    id: int
    seq: int | None  # None: not known here (a scheduled run, queued with its job)


@dataclass(frozen=True, slots=True)
class InboxEntry:
    id: int
    session: str  # the session's storage key
    event: str  # the accepted message, as the hub encoded it
    replies: tuple[str, ...] = ()  # platform ids of the reply's messages sent before the process stopped
    job: int | None = None  # a scheduled job's run (bot/store/jobs.py), not a message
    seq: int = 0  # its place in the chat's sequence (Accepted.seq)
    order: int | None = None  # the platform's order key (IncomingMessage.order), where it gives one


class InboxStore(Protocol):
    async def seen(self, key: str, ttl: float = DEDUPE_TTL) -> bool:
        """Record the key; True if it was already recorded and has not expired (one atomic statement)."""
        ...

    async def unsee(self, key: str) -> None:
        """Forget a recorded key: the event it marked was not kept, and its redelivery must be taken."""
        ...

    async def accept(self, key: str, session: str, event: str, ttl: float = DEDUPE_TTL,
                     order: int | None = None) -> Accepted | None:
        """Record the dedupe key and queue the event as the chat's next in sequence, atomically (with the
        platform's order key, if any); None if the key was seen."""
        ...

    async def reorder(self, session: str, places: Sequence[tuple[int, int]]) -> None:
        """Give these waiting entries of the chat new places in its sequence ((entry id, seq) pairs, a permutation
        of their own places): a late arrival takes the place its platform's order gives it."""
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
        """This session's accepted entries not finished yet, in the chat's sequence (a replica taking it over)."""
        ...

    async def purge_expired(self) -> int:
        """Forget expired dedupe keys; returns how many went."""
        ...
