"""Memories on SQLite; every statement is scoped by chat. LIKE matches ASCII letters case-insensitively;
meaning is ranked by sqlite-vec's `vec_distance_cosine`: sketches over a bounded candidate set, then the best
whole embeddings (bot/store/memories.py)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from bot.store.memories import (
    BIGINT_MAX,
    CANDIDATES,
    MIN_SIMILARITY,
    RERANK,
    MemoryEntry,
    Vector,
    bounded,
    pack,
    query_words,
    sketch,
)
from bot.store.sqlite.codec import now_iso, parse_time
from bot.store.sqlite.database import Database

_COLUMNS = "id, chat, type, tags, content, uses, created_at, last_used_at"
TOP_SQL = f"SELECT {_COLUMNS} FROM memories WHERE chat = ? ORDER BY uses DESC, id DESC LIMIT ?"  # per agent turn
_NEAREST_SQL = f"""
SELECT {_COLUMNS} FROM (
    SELECT {_COLUMNS}, vec_distance_cosine(embedding, ?) AS distance FROM (
        SELECT * FROM (SELECT * FROM memories WHERE chat = ? AND length(embedding) = ? ORDER BY id DESC LIMIT ?)
        ORDER BY vec_distance_cosine(sketch, ?) LIMIT ?))
WHERE distance <= ? ORDER BY distance, uses DESC, id DESC LIMIT ?
"""
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

    async def add(self, chat: str, type: str, content: str, tags: Sequence[str] = (),
                  vector: Vector | None = None) -> int:
        blob = None if vector is None else pack(vector)
        short = None if vector is None else pack(sketch(vector))

        def op(db: sqlite3.Connection) -> int:
            cur = db.execute("INSERT INTO memories (chat, type, tags, content, created_at, embedding, sketch) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (chat, type, json.dumps(list(tags), ensure_ascii=False), content, now_iso(), blob, short))
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
        return await self._mark_used(chat, sql, [*(p for w in words for p in (_like(w), _like(w))), chat,
                                                 bounded(limit)])

    async def nearest(self, chat: str, vector: Vector, limit: int = 10,
                      min_similarity: float = MIN_SIMILARITY) -> list[MemoryEntry]:
        if limit < 1:
            return []
        blob = pack(vector)  # memories embedded by another model (another length) are not compared
        params = [blob, chat, len(blob), CANDIDATES, pack(sketch(vector)), RERANK, 1.0 - min_similarity, bounded(limit)]
        return await self._mark_used(chat, _NEAREST_SQL, params)

    async def engine(self) -> str:
        """The sqlite-vec version ranking by meaning, or "python" where the extension could not be loaded."""
        def op(db: sqlite3.Connection) -> str:
            try:
                return str(db.execute("SELECT vec_version()").fetchone()[0])
            except sqlite3.OperationalError:
                return "python"

        return await self._db.read(op)

    async def _mark_used(self, chat: str, sql: str, params: Sequence[Any]) -> list[MemoryEntry]:
        """Run a ranking query and count what it found as used, in one transaction."""
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
