"""Dedupe keys on SQLite, expiring by the wall clock (so a restart does not forget them)."""

from __future__ import annotations

from collections.abc import Callable

from bot.store.inbox import DEDUPE_TTL
from bot.store.sqlite.database import Database

_SEEN_SQL = ("INSERT INTO seen_events (key, expires_at) VALUES (?, ?) ON CONFLICT (key) "
             "DO UPDATE SET expires_at = excluded.expires_at WHERE seen_events.expires_at <= ?")


class SqliteInbox:
    def __init__(self, db: Database, clock: Callable[[], float]) -> None:
        self._db = db
        self._clock = clock

    async def seen(self, key: str, ttl: float = DEDUPE_TTL) -> bool:
        now = self._clock()
        return await self._db.write(lambda db: db.execute(_SEEN_SQL, (key, now + ttl, now)).rowcount == 0)

    async def purge_expired(self) -> int:
        sql, now = "DELETE FROM seen_events WHERE expires_at <= ?", self._clock()
        return await self._db.write(lambda db: db.execute(sql, (now,)).rowcount)
