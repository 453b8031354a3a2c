"""Memories on SQLite; every statement is scoped by chat. LIKE matches ASCII letters case-insensitively."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from bot.store.memories import BIGINT_MAX, MemoryEntry, bounded, query_words
from bot.store.sqlite.codec import now_iso, parse_time
from bot.store.sqlite.database import Database

_COLUMNS = "id, chat, type, tags, content, uses, created_at, last_used_at"
TOP_SQL = f"SELECT {_COLUMNS} FROM memories WHERE chat = ? ORDER BY uses DESC, id DESC LIMIT ?"  # per agent turn
_WORD_MATCH = "(content LIKE ? ESCAPE '\\' OR tags LIKE ? ESCAPE '\\')"


def _entry(row: Sequence[Any]) -> MemoryEntry:
    mid, chat, kind, tags, content, uses, created, used = row
    return MemoryEntry(mid, chat, kind, content, tuple(json.loads(tags)), uses, datetime.fromisoformat(created),
                       parse_time(used))


def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class SqliteMemories:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def _entries(self, sql: str, params: Sequence[Any]) -> list[MemoryEntry]:
        return [_entry(r) for r in await self._db.read(lambda db: db.execute(sql, params).fetchall())]

    async def add(self, chat: str, type: str, content: str, tags: Sequence[str] = ()) -> int:
        def op(db: sqlite3.Connection) -> int:
            cur = db.execute("INSERT INTO memories (chat, type, tags, content, created_at) VALUES (?, ?, ?, ?, ?)",
                             (chat, type, json.dumps(list(tags), ensure_ascii=False), content, now_iso()))
            sql = "SELECT COUNT(*) FROM memories WHERE chat = ? AND id <= ?"
            return int(db.execute(sql, (chat, cur.lastrowid)).fetchone()[0])

        return await self._db.write(op)

    async def search(self, chat: str, query: str, limit: int = 10) -> list[MemoryEntry]:
        words = query_words(query)
        if not words or limit < 1:
            return []
        score = " + ".join(_WORD_MATCH for _ in words)
        sql = (f"SELECT {_COLUMNS} FROM (SELECT {_COLUMNS}, ({score}) AS score FROM memories WHERE chat = ?) "
               "WHERE score > 0 ORDER BY score DESC, uses DESC, id DESC LIMIT ?")
        params = [*(p for w in words for p in (_like(w), _like(w))), chat, bounded(limit)]
        now = now_iso()

        def op(db: sqlite3.Connection) -> list[MemoryEntry]:
            found = [_entry(r) for r in db.execute(sql, params)]
            if found:
                marks = ", ".join("?" for _ in found)
                db.execute(f"UPDATE memories SET uses = uses + 1, last_used_at = ? WHERE chat = ? AND id IN ({marks})",
                           (now, chat, *(e.id for e in found)))
            return found

        used = datetime.fromisoformat(now)
        return [replace(e, uses=e.uses + 1, last_used_at=used) for e in await self._db.write(op)]

    async def top(self, chat: str, limit: int = 20) -> list[MemoryEntry]:
        return await self._entries(TOP_SQL, (chat, bounded(limit)))

    async def page(self, chat: str, limit: int = 20, offset: int = 0) -> list[MemoryEntry]:
        sql = f"SELECT {_COLUMNS} FROM memories WHERE chat = ? ORDER BY id LIMIT ? OFFSET ?"
        return await self._entries(sql, (chat, bounded(limit), bounded(offset)))

    async def count(self, chat: str) -> int:
        sql = "SELECT COUNT(*) FROM memories WHERE chat = ?"
        return int(await self._db.read(lambda db: db.execute(sql, (chat,)).fetchone()[0]))

    async def delete(self, chat: str, number: int) -> bool:
        if not 1 <= number <= BIGINT_MAX:
            return False
        sql = ("DELETE FROM memories WHERE chat = ? AND id = "
               "(SELECT id FROM memories WHERE chat = ? ORDER BY id LIMIT 1 OFFSET ?)")
        return await self._db.write(lambda db: db.execute(sql, (chat, chat, number - 1)).rowcount > 0)
