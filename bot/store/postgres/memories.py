"""Memories on PostgreSQL; every statement is scoped by chat, and each operation is one round trip.

Without pgvector (Debian 12's archive has none), embeddings are a REAL[] column and meaning is ranked by a dot
product in SQL: sketches over the chat's newest CANDIDATES embedded memories, whole embeddings over the best
RERANK of those (bot/store/memories.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from bot.store.memories import (
    BIGINT_MAX,
    CANDIDATES,
    MIN_SIMILARITY,
    RERANK,
    MemoryEntry,
    Vector,
    bounded,
    query_words,
    sketch,
)
from bot.store.postgres.database import Database
from bot.tree.model import utc_now

_COLUMNS = "id, chat, type, tags, content, uses, created_at, last_used_at"
_ADD_SQL = """
WITH added AS (
    INSERT INTO memories (chat, type, tags, content, created_at, embedding, sketch) VALUES ($1, $2, $3, $4, $5, $6, $7)
    RETURNING id
)
SELECT 1 + COUNT(m.id) FROM added LEFT JOIN memories AS m ON m.chat = $1 AND m.id < added.id
"""
_RETURNED = ", ".join("m." + c for c in _COLUMNS.split(", "))
_USED = f"""
used AS (
    UPDATE memories AS m SET uses = m.uses + 1, last_used_at = $3 FROM found
    WHERE m.chat = $1 AND m.id = found.id RETURNING {_RETURNED}
)
SELECT used.* FROM used JOIN found USING (id) ORDER BY found.score DESC, found.uses DESC, found.id DESC
"""
_NEAREST_SQL = f"""
WITH candidates AS (
    SELECT id, sketch FROM memories WHERE chat = $1 AND sketch IS NOT NULL ORDER BY id DESC LIMIT $5
), best AS (
    SELECT id FROM candidates ORDER BY (SELECT sum(a * b) FROM unnest(sketch, $7::real[]) AS v(a, b)) DESC LIMIT $8
), near AS (  -- embeddings of another width (another model) are not compared
    SELECT m.id, m.uses, m.embedding FROM best JOIN memories AS m ON m.chat = $1 AND m.id = best.id
    WHERE cardinality(m.embedding) = cardinality($4::real[])
), found AS (
    SELECT id, uses, score FROM (
        SELECT id, uses, (SELECT sum(a * b) FROM unnest(embedding, $4::real[]) AS v(a, b)) AS score FROM near
    ) AS s WHERE score >= $6 ORDER BY score DESC, uses DESC, id DESC LIMIT $2
), {_USED}"""
_WORD_MATCH = "(strpos(lower(content), ${n}) > 0 OR strpos(lower(array_to_string(tags, ' ')), ${n}) > 0)::int"


def _entry(row: asyncpg.Record) -> MemoryEntry:
    mid, chat, kind, tags, content, uses, created, used = row
    return MemoryEntry(mid, chat, kind, content, tuple(tags), uses, created, used)


class PostgresMemories:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, chat: str, type: str, content: str, tags: Sequence[str] = (),
                  vector: Vector | None = None) -> int:
        embedding = None if vector is None else list(vector)
        short = None if vector is None else sketch(vector)
        return int(await self._db.pool.fetchval(_ADD_SQL, chat, type, list(tags), content, utc_now(), embedding, short))

    async def nearest(self, chat: str, vector: Vector, limit: int = 10,
                      min_similarity: float = MIN_SIMILARITY) -> list[MemoryEntry]:
        if limit < 1:
            return []
        rows = await self._db.pool.fetch(_NEAREST_SQL, chat, bounded(limit), utc_now(), list(vector), CANDIDATES,
                                         min_similarity, sketch(vector), RERANK)
        return [_entry(r) for r in rows]

    async def search(self, chat: str, query: str, limit: int = 10) -> list[MemoryEntry]:
        words = query_words(query)
        if not words or limit < 1:
            return []
        score = " + ".join(_WORD_MATCH.format(n=i + 4) for i in range(len(words)))
        sql = f"""
        WITH found AS (
            SELECT id, uses, score FROM (SELECT id, uses, ({score}) AS score FROM memories WHERE chat = $1) AS s
            WHERE score > 0 ORDER BY score DESC, uses DESC, id DESC LIMIT $2
        ), {_USED}"""
        return [_entry(r) for r in await self._db.pool.fetch(sql, chat, bounded(limit), utc_now(), *words)]

    async def top(self, chat: str, limit: int = 20) -> list[MemoryEntry]:
        sql = f"SELECT {_COLUMNS} FROM memories WHERE chat = $1 ORDER BY uses DESC, id DESC LIMIT $2"
        return [_entry(r) for r in await self._db.pool.fetch(sql, chat, bounded(limit))]

    async def page(self, chat: str, limit: int = 20, offset: int = 0) -> list[MemoryEntry]:
        sql = f"SELECT {_COLUMNS} FROM memories WHERE chat = $1 ORDER BY id LIMIT $2 OFFSET $3"
        return [_entry(r) for r in await self._db.pool.fetch(sql, chat, bounded(limit), bounded(offset))]

    async def count(self, chat: str) -> int:
        return int(await self._db.pool.fetchval("SELECT COUNT(*) FROM memories WHERE chat = $1", chat))

    async def delete(self, chat: str, number: int) -> bool:
        if not 1 <= number <= BIGINT_MAX:
            return False
        sql = ("DELETE FROM memories WHERE chat = $1 AND id = "
               "(SELECT id FROM memories WHERE chat = $1 ORDER BY id LIMIT 1 OFFSET $2)")
        return bool(await self._db.pool.execute(sql, chat, number - 1) == "DELETE 1")
