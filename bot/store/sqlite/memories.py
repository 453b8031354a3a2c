"""The memories half of SqliteStore (seed 003 §4), kept apart so store.py stays within its size.

Every statement is scoped by chat. A chat's memories are numbered 1..n in the order they were made:
that number is what `remember` answers, `/memory` shows and `/forget` takes, so a chat never sees the
global row ids (which would reveal how much other chats remember).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol, TypeVar

from bot.tree.model import utc_now

MEMORY_TYPES = ("fact", "pref", "decision", "context", "lesson")
MAX_QUERY_WORDS = 8
_SQL_INT_MAX = 2**63 - 1  # a bigger page or number from a chat command would overflow the SQLite binding
_COLUMNS = "id, chat, type, tags, content, uses, created_at, last_used_at"
TOP_SQL = f"SELECT {_COLUMNS} FROM memories WHERE chat = ? ORDER BY uses DESC, id DESC LIMIT ?"  # per agent turn
_WORD_MATCH = "(content LIKE ? ESCAPE '\\' OR tags LIKE ? ESCAPE '\\')"


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
    async def add_memory(self, chat: str, type: str, content: str, tags: Sequence[str] = ()) -> int: ...
    async def search_memories(self, chat: str, query: str, limit: int = 10) -> list[MemoryEntry]: ...
    async def top_memories(self, chat: str, limit: int = 20) -> list[MemoryEntry]: ...
    async def list_memories(self, chat: str, limit: int = 20, offset: int = 0) -> list[MemoryEntry]: ...
    async def count_memories(self, chat: str) -> int: ...
    async def delete_memory(self, chat: str, number: int) -> bool: ...


T = TypeVar("T")


class _Connection(Protocol):
    """What the mixin uses of SqliteStore: one operation on the database thread, or one transaction."""

    async def _read(self, op: Callable[[sqlite3.Connection], T]) -> T: ...
    async def _write(self, op: Callable[[sqlite3.Connection], T]) -> T: ...


def _now() -> str:
    return utc_now().isoformat(timespec="microseconds")


def _entry(row: Sequence[Any]) -> MemoryEntry:
    mid, chat, kind, tags, content, uses, created, used = row
    return MemoryEntry(mid, chat, kind, content, tuple(json.loads(tags)), uses, datetime.fromisoformat(created),
                       datetime.fromisoformat(used) if used else None)


def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _bounded(value: int) -> int:
    return min(max(value, 0), _SQL_INT_MAX)


def _rows(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    return db.execute(sql, params).fetchall()


class MemoryRows:
    """Mixed into SqliteStore; each method is one operation on the store's database thread."""

    async def add_memory(self: _Connection, chat: str, type: str, content: str, tags: Sequence[str] = ()) -> int:
        """Store one memory (type and content already validated); returns its number in this chat."""
        def op(db: sqlite3.Connection) -> int:
            cur = db.execute(
                "INSERT INTO memories (chat, type, tags, content, created_at) VALUES (?, ?, ?, ?, ?)",
                (chat, type, json.dumps(list(tags), ensure_ascii=False), content, _now()),
            )
            number = _rows(db, "SELECT COUNT(*) FROM memories WHERE chat = ? AND id <= ?", (chat, cur.lastrowid))
            return int(number[0][0])

        return await self._write(op)

    async def search_memories(self: _Connection, chat: str, query: str, limit: int = 10) -> list[MemoryEntry]:
        """Entries whose content or tags contain any query word, most matching words first; marks them used."""
        words = list(dict.fromkeys(query.lower().split()))[:MAX_QUERY_WORDS]
        if not words or limit < 1:
            return []
        score = " + ".join(_WORD_MATCH for _ in words)
        sql = (f"SELECT {_COLUMNS} FROM (SELECT {_COLUMNS}, ({score}) AS score FROM memories WHERE chat = ?) "
               "WHERE score > 0 ORDER BY score DESC, uses DESC, id DESC LIMIT ?")
        params = [p for w in words for p in (_like(w), _like(w))]
        now = _now()

        def op(db: sqlite3.Connection) -> list[MemoryEntry]:
            found = [_entry(r) for r in _rows(db, sql, [*params, chat, _bounded(limit)])]
            if found:
                marks = ", ".join("?" for _ in found)
                db.execute(
                    f"UPDATE memories SET uses = uses + 1, last_used_at = ? WHERE chat = ? AND id IN ({marks})",
                    (now, chat, *(e.id for e in found)),
                )
            return found

        used = datetime.fromisoformat(now)
        return [replace(e, uses=e.uses + 1, last_used_at=used) for e in await self._write(op)]

    async def top_memories(self: _Connection, chat: str, limit: int = 20) -> list[MemoryEntry]:
        """Most used first, then newest: one walk of the (chat, uses, id) index, so its cost is `limit` rows."""
        rows = await self._read(lambda db: _rows(db, TOP_SQL, (chat, _bounded(limit))))
        return [_entry(r) for r in rows]

    async def list_memories(self: _Connection, chat: str, limit: int = 20, offset: int = 0) -> list[MemoryEntry]:
        """Oldest first: entry i of the result has number offset + i + 1."""
        sql = f"SELECT {_COLUMNS} FROM memories WHERE chat = ? ORDER BY id LIMIT ? OFFSET ?"
        rows = await self._read(lambda db: _rows(db, sql, (chat, _bounded(limit), _bounded(offset))))
        return [_entry(r) for r in rows]

    async def count_memories(self: _Connection, chat: str) -> int:
        rows = await self._read(lambda db: _rows(db, "SELECT COUNT(*) FROM memories WHERE chat = ?", (chat,)))
        return int(rows[0][0])

    async def delete_memory(self: _Connection, chat: str, number: int) -> bool:
        """Delete this chat's memory number `number` (as /memory shows it); False if there is none."""
        if not 1 <= number <= _SQL_INT_MAX:
            return False
        sql = ("DELETE FROM memories WHERE chat = ? AND id = "
               "(SELECT id FROM memories WHERE chat = ? ORDER BY id LIMIT 1 OFFSET ?)")
        return await self._write(lambda db: db.execute(sql, (chat, chat, number - 1)).rowcount > 0)
