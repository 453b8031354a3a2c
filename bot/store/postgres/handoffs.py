"""Hand-off codes on PostgreSQL: spending one is a single DELETE … RETURNING, atomic across replicas."""

from __future__ import annotations

from typing import Any

from bot.store.handoffs import Handoff
from bot.store.postgres.database import Database

_COLUMNS = "code, chat, conversation_id, platform, user_id, move, expires_at, link"


def _handoff(row: Any) -> Handoff | None:
    return None if row is None else Handoff(*row)


class PostgresHandoffs:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def offer(self, handoff: Handoff, now: float) -> None:
        h = handoff
        async with self._db.pool.acquire() as conn, conn.transaction():
            await conn.execute("DELETE FROM handoffs WHERE expires_at <= $1", now)
            await conn.execute(f"INSERT INTO handoffs ({_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                               h.code, h.chat, h.conversation_id, h.platform, h.user_id, h.move, h.expires_at, h.link)

    async def peek(self, code: str, now: float) -> Handoff | None:
        sql = f"SELECT {_COLUMNS} FROM handoffs WHERE code = $1 AND expires_at > $2"
        return _handoff(await self._db.pool.fetchrow(sql, code, now))

    async def take(self, code: str, now: float) -> Handoff | None:
        sql = f"DELETE FROM handoffs WHERE code = $1 AND expires_at > $2 RETURNING {_COLUMNS}"
        return _handoff(await self._db.pool.fetchrow(sql, code, now))

    async def link(self, alias: str, home: str, now: float) -> None:
        async with self._db.pool.acquire() as conn, conn.transaction():
            await conn.execute("UPDATE chat_links SET home = $1 WHERE home = $2", home, alias)
            await conn.execute("INSERT INTO chat_links (alias, home, linked_at) VALUES ($1, $2, $3) ON CONFLICT "
                               "(alias) DO UPDATE SET home = excluded.home, linked_at = excluded.linked_at",
                               alias, home, now)

    async def unlink(self, alias: str) -> str | None:
        home = await self._db.pool.fetchval("DELETE FROM chat_links WHERE alias = $1 RETURNING home", alias)
        return None if home is None else str(home)

    async def links(self) -> dict[str, str]:
        return {str(r[0]): str(r[1]) for r in await self._db.pool.fetch("SELECT alias, home FROM chat_links")}
