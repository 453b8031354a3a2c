"""Dedupe keys on PostgreSQL, expiring by the wall clock; one statement each."""

from __future__ import annotations

from collections.abc import Callable

from bot.store.inbox import DEDUPE_TTL
from bot.store.postgres.database import Database

_SEEN_SQL = ("INSERT INTO seen_events (key, expires_at) VALUES ($1, $2) ON CONFLICT (key) "
             "DO UPDATE SET expires_at = excluded.expires_at WHERE seen_events.expires_at <= $3 RETURNING 1")


class PostgresInbox:
    def __init__(self, db: Database, clock: Callable[[], float]) -> None:
        self._db = db
        self._clock = clock

    async def seen(self, key: str, ttl: float = DEDUPE_TTL) -> bool:
        now = self._clock()
        return await self._db.pool.fetchval(_SEEN_SQL, key, now + ttl, now) is None

    async def purge_expired(self) -> int:
        status = await self._db.pool.execute("DELETE FROM seen_events WHERE expires_at <= $1", self._clock())
        return int(status.split()[-1])  # "DELETE <n>"
