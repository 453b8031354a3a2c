"""Branch summaries on SQLite; scoped by chat through the conversation they belong to."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database
from bot.store.summaries import Summary


class SqliteSummaries:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def put(self, chat: str, conv_id: str, message_id: str, content: str, covered: int) -> Summary:
        created = now_iso()

        def op(db: sqlite3.Connection) -> None:
            owned = db.execute("SELECT 1 FROM messages WHERE chat = ? AND conversation_id = ? AND id = ?",
                               (chat, conv_id, message_id)).fetchone()
            if owned is None:
                raise KeyError(f"no message {message_id!r} in conversation {conv_id!r}")
            db.execute("INSERT OR REPLACE INTO summaries (chat, conversation_id, message_id, content, covered, "
                       "created_at) VALUES (?, ?, ?, ?, ?, ?)", (chat, conv_id, message_id, content, covered, created))

        await self._db.write(op)
        return Summary(message_id, content, covered, datetime.fromisoformat(created))

    async def of_conversation(self, chat: str, conv_id: str) -> dict[str, Summary]:
        sql = "SELECT message_id, content, covered, created_at FROM summaries WHERE chat = ? AND conversation_id = ?"
        rows = await self._db.read(lambda db: db.execute(sql, (chat, conv_id)).fetchall())
        return {r[0]: Summary(r[0], r[1], int(r[2]), datetime.fromisoformat(r[3])) for r in rows}
