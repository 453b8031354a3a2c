"""Chat settings on SQLite: one JSON object in the chat's row; keys a newer version wrote are kept."""

from __future__ import annotations

import json
import sqlite3

from bot.store.settings import ChatSettings, check_fields
from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database


class SqliteSettings:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, chat: str) -> ChatSettings:
        row = await self._db.read(lambda db: db.execute("SELECT settings FROM chats WHERE key = ?", (chat,)).fetchone())
        return ChatSettings.from_stored(json.loads(row[0]) if row else {})

    async def update(self, chat: str, **values: str | None) -> ChatSettings:
        check_fields(values)

        def op(db: sqlite3.Connection) -> ChatSettings:
            row = db.execute("SELECT settings FROM chats WHERE key = ?", (chat,)).fetchone()
            stored = {**(json.loads(row[0]) if row else {}), **values}
            stored = {k: v for k, v in stored.items() if v is not None}
            db.execute(
                "INSERT INTO chats (key, settings, created_at) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET settings = excluded.settings",
                (chat, json.dumps(stored, ensure_ascii=False), now_iso()),
            )
            return ChatSettings.from_stored(stored)

        return await self._db.write(op)
