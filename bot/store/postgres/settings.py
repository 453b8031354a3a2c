"""Chat settings on PostgreSQL: one JSONB object per chat, merged by a single upsert (no lost updates)."""

from __future__ import annotations

from bot.store.postgres.database import Database
from bot.store.settings import ChatSettings, check_fields

_UPDATE_SQL = """
INSERT INTO chats (key, settings) VALUES ($1, jsonb_strip_nulls($2::jsonb))
ON CONFLICT (key) DO UPDATE SET settings = jsonb_strip_nulls(chats.settings || excluded.settings || $2::jsonb)
RETURNING settings
"""


class PostgresSettings:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, chat: str) -> ChatSettings:
        return ChatSettings.from_stored(await self._db.pool.fetchval("SELECT settings FROM chats WHERE key = $1", chat)
                                        or {})

    async def update(self, chat: str, **values: str | None) -> ChatSettings:
        check_fields(values)
        return ChatSettings.from_stored(await self._db.pool.fetchval(_UPDATE_SQL, chat, values))
