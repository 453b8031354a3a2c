"""Per-chat long-term memory (seed 003 §4).

A chat's memories are numbered 1..n in the order they were made: that number is what `remember`
answers, `/memory` shows and `/forget` takes, so a chat never sees global row ids (which would reveal
how much other chats remember).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

MEMORY_TYPES = ("fact", "pref", "decision", "context", "lesson")
MAX_QUERY_WORDS = 8
BIGINT_MAX = 2**63 - 1  # a bigger page or number from a chat command would overflow a database integer


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    id: int
    chat: str
    type: str
    content: str
    tags: tuple[str, ...]
    uses: int
    created_at: datetime
    last_used_at: datetime | None


class MemoryStore(Protocol):
    async def add(self, chat: str, type: str, content: str, tags: Sequence[str] = ()) -> int:
        """Store one memory (type and content already validated); returns its number in this chat."""
        ...

    async def search(self, chat: str, query: str, limit: int = 10) -> list[MemoryEntry]:
        """Entries whose content or tags contain any query word (case-insensitive, literally), most
        matching words first, then most used, then newest; marks them used."""
        ...

    async def top(self, chat: str, limit: int = 20) -> list[MemoryEntry]:
        """Most used first, then newest: read every agent turn, so its cost is `limit` rows."""
        ...

    async def page(self, chat: str, limit: int = 20, offset: int = 0) -> list[MemoryEntry]:
        """Oldest first: entry i of the result has number offset + i + 1."""
        ...

    async def count(self, chat: str) -> int: ...

    async def delete(self, chat: str, number: int) -> bool:
        """Delete this chat's memory number `number`; False if there is none."""
        ...


def query_words(query: str) -> list[str]:
    return list(dict.fromkeys(query.lower().split()))[:MAX_QUERY_WORDS]


def bounded(value: int) -> int:
    """A limit, offset or number as a database integer: negative is 0, huge is the largest."""
    return min(max(value, 0), BIGINT_MAX)
