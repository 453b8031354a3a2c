"""Forgetting on SQLite: one IMMEDIATE transaction over the tables bot/store/forget.py names."""

from __future__ import annotations

import sqlite3

from bot.store.forget import AUTHOR_FILES, BY_AUTHOR, BY_CHAT, BY_USER
from bot.store.sqlite.database import Database
from bot.tree.model import files_from_json


def _delete(db: sqlite3.Connection, rows: tuple[tuple[str, str], ...], value: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table, column in rows:  # a table may be named twice, by two columns (chat_links: either end)
        counts[table] = counts.get(table, 0) + db.execute(f"DELETE FROM {table} WHERE {column} = ?", (value,)).rowcount
    return {table: n for table, n in counts.items() if n}


class SqliteForget:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def forget_chat(self, chat: str) -> dict[str, int]:
        return await self._db.write(lambda db: _delete(db, BY_CHAT, chat))

    async def forget_author(self, chat: str, platform: str, user_id: str) -> tuple[dict[str, int], list[str]]:
        def op(db: sqlite3.Connection) -> tuple[dict[str, int], list[str]]:
            rows = db.execute(AUTHOR_FILES.replace("$", "?"), (chat, user_id)).fetchall()
            files = [f.path for (text,) in rows for f in files_from_json(text)]
            counts = {table: db.execute(sql.replace("$", "?"), (chat, f"{platform}:{user_id}" if person else user_id))
                      .rowcount for table, sql, person in BY_AUTHOR}
            return {table: n for table, n in counts.items() if n}, files

        return await self._db.write(op)

    async def forget_user(self, platform: str, user_id: str) -> dict[str, int]:
        def op(db: sqlite3.Connection) -> dict[str, int]:
            counts = _delete(db, BY_USER, f"{platform}:{user_id}")
            paired = db.execute("DELETE FROM pairing WHERE platform = ? AND user_id = ?", (platform, user_id)).rowcount
            return {**counts, **({"pairing": paired} if paired else {})}

        return await self._db.write(op)

    async def tables(self) -> list[str]:
        sql = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        return [str(row[0]) for row in await self._db.read(lambda db: db.execute(sql).fetchall())]
