"""The group-context ring on SQLite: insert and trim in one transaction on the database thread."""

from __future__ import annotations

import sqlite3

from bot.store.group_context import HeardLine
from bot.store.sqlite.database import Database

_INSERT = ("INSERT INTO group_context (chat, message_id, at, sender, text, sender_id) VALUES (?, ?, ?, ?, ?, ?) "
           "ON CONFLICT (chat, message_id) DO NOTHING")
_TRIM = ("DELETE FROM group_context WHERE chat = ? AND (at < ? OR id <= ("
         "SELECT id FROM group_context WHERE chat = ? ORDER BY id DESC LIMIT 1 OFFSET ?))")
_RECENT = "SELECT at, sender, text FROM group_context WHERE chat = ? AND at >= ? ORDER BY id DESC LIMIT ?"


class SqliteGroupContext:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def keep(self, chat: str, message_id: str, line: HeardLine, *, limit: int, since: float) -> None:
        def op(db: sqlite3.Connection) -> None:
            if db.execute(_INSERT, (chat, message_id, line.at, line.sender, line.text, line.sender_id)).rowcount:
                db.execute(_TRIM, (chat, since, chat, limit))

        await self._db.write(op)

    async def recent(self, chat: str, *, since: float, limit: int) -> list[HeardLine]:
        rows = await self._db.read(lambda db: db.execute(_RECENT, (chat, since, limit)).fetchall())
        return [HeardLine(float(at), sender, text) for at, sender, text in reversed(rows)]

    async def purge(self, before: float) -> int:
        sql = "DELETE FROM group_context WHERE at < ?"
        return await self._db.write(lambda db: db.execute(sql, (before,)).rowcount)
