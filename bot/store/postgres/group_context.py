"""The group-context ring on PostgreSQL: insert and trim are one statement, so one round trip."""

from __future__ import annotations

from bot.store.group_context import HeardLine
from bot.store.postgres.database import Database

# The DELETE sees the table as it was before the INSERT, so it keeps the newest limit - 1 older lines.
_KEEP = """
WITH added AS (
    INSERT INTO group_context (chat, message_id, at, sender, text, sender_id) VALUES ($1, $2, $3, $4, $5, $8)
    ON CONFLICT (chat, message_id) DO NOTHING RETURNING id
)
DELETE FROM group_context WHERE chat = $1 AND EXISTS (SELECT 1 FROM added) AND (at < $6 OR id <= (
    SELECT id FROM group_context WHERE chat = $1 ORDER BY id DESC LIMIT 1 OFFSET $7::int - 1))
"""
_RECENT = "SELECT at, sender, text FROM group_context WHERE chat = $1 AND at >= $2 ORDER BY id DESC LIMIT $3"


class PostgresGroupContext:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def keep(self, chat: str, message_id: str, line: HeardLine, *, limit: int, since: float) -> None:
        await self._db.pool.execute(_KEEP, chat, message_id, line.at, line.sender, line.text, since, limit,
                                    line.sender_id)

    async def recent(self, chat: str, *, since: float, limit: int) -> list[HeardLine]:
        rows = await self._db.pool.fetch(_RECENT, chat, since, limit)
        return [HeardLine(float(r[0]), r[1], r[2]) for r in reversed(rows)]

    async def purge(self, before: float) -> int:
        status = await self._db.pool.execute("DELETE FROM group_context WHERE at < $1", before)
        return int(status.split()[-1])  # "DELETE <n>"
