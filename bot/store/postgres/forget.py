"""Forgetting on PostgreSQL: one transaction over the tables bot/store/forget.py names."""

from __future__ import annotations

import asyncpg

from bot.store.forget import AUTHOR_FILES, BY_AUTHOR, BY_CHAT, BY_USER
from bot.store.postgres.database import Database
from bot.tree.model import files_from_json


async def _delete(conn: asyncpg.Connection, rows: tuple[tuple[str, str], ...], value: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table, column in rows:  # a table may be named twice, by two columns (chat_links: either end)
        status = await conn.execute(f"DELETE FROM {table} WHERE {column} = $1", value)
        if (n := int(status.split()[-1])) > 0:
            counts[table] = counts.get(table, 0) + n
    return counts


class PostgresForget:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def forget_chat(self, chat: str) -> dict[str, int]:
        async with self._db.pool.acquire() as conn, conn.transaction():
            return await _delete(conn, BY_CHAT, chat)

    async def forget_author(self, chat: str, platform: str, user_id: str) -> tuple[dict[str, int], list[str]]:
        async with self._db.pool.acquire() as conn, conn.transaction():
            files = [f.path for row in await conn.fetch(AUTHOR_FILES, chat, user_id) for f in files_from_json(row[0])]
            counts = {}
            for table, sql, person in BY_AUTHOR:
                status = await conn.execute(sql, chat, f"{platform}:{user_id}" if person else user_id)
                if (n := int(status.split()[-1])) > 0:
                    counts[table] = n
            return counts, files

    async def forget_user(self, platform: str, user_id: str) -> dict[str, int]:
        async with self._db.pool.acquire() as conn, conn.transaction():
            counts = await _delete(conn, BY_USER, f"{platform}:{user_id}")
            status = await conn.execute("DELETE FROM pairing WHERE platform = $1 AND user_id = $2", platform, user_id)
            paired = int(status.split()[-1])
            return {**counts, **({"pairing": paired} if paired else {})}

    async def tables(self) -> list[str]:
        sql = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
        return [str(row[0]) for row in await self._db.pool.fetch(sql)]
