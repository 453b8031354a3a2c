"""Group context: the newest un-addressed messages of each group chat or thread, in a small capped ring.

They are never answered and never join the conversation tree; the prompt shows them as context from other
people. Keeping one costs one statement (SQLite: one transaction) whatever the chat's history, because the
ring is trimmed to its cap on every insert.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class HeardLine:
    at: float  # Unix seconds when the hub received it
    sender: str
    text: str
    sender_id: str | None = None  # the sender's id on its platform (kept, never shown: /forget_me erases by it)


class GroupContextStore(Protocol):
    async def keep(self, chat: str, message_id: str, line: HeardLine, *, limit: int, since: float) -> None:
        """Add a line to the chat's ring (a message id it already holds is ignored), then drop what falls
        beyond the newest `limit` or is older than `since` — atomically, in one round trip."""
        ...

    async def recent(self, chat: str, *, since: float, limit: int) -> list[HeardLine]:
        """The chat's newest `limit` lines not older than `since`, oldest first."""
        ...

    async def purge(self, before: float) -> int:
        """Delete every chat's lines older than `before` (chats that went quiet); returns how many."""
        ...
