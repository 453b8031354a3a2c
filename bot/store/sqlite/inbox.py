"""The inbox on SQLite: dedupe keys expiring by the wall clock (a restart does not forget them), and the
accepted events not answered yet."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from bot.store.inbox import DEDUPE_TTL, InboxEntry
from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database

_SEEN_SQL = ("INSERT INTO seen_events (key, expires_at) VALUES (?, ?) ON CONFLICT (key) "
             "DO UPDATE SET expires_at = excluded.expires_at WHERE seen_events.expires_at <= ?")
_ENTRIES = "SELECT id, session, event, replies, job FROM inbox"


def queue(db: sqlite3.Connection, key: str, session: str, event: str, now: float, ttl: float = DEDUPE_TTL,
          job: int | None = None) -> int | None:
    """Record the dedupe key and queue the event in the caller's transaction; None if the key was seen."""
    if db.execute(_SEEN_SQL, (key, now + ttl, now)).rowcount == 0:
        return None
    cur = db.execute("INSERT INTO inbox (session, event, accepted_at, job) VALUES (?, ?, ?, ?)",
                     (session, event, now_iso(), job))
    return cur.lastrowid


class SqliteInbox:
    def __init__(self, db: Database, clock: Callable[[], float]) -> None:
        self._db = db
        self._clock = clock

    async def seen(self, key: str, ttl: float = DEDUPE_TTL) -> bool:
        now = self._clock()
        return await self._db.write(lambda db: db.execute(_SEEN_SQL, (key, now + ttl, now)).rowcount == 0)

    async def accept(self, key: str, session: str, event: str, ttl: float = DEDUPE_TTL) -> int | None:
        now = self._clock()
        return await self._db.write(lambda db: queue(db, key, session, event, now, ttl))

    async def finish(self, session: str, entry_ids: Sequence[int]) -> None:
        ids = [int(i) for i in entry_ids]
        if ids:  # one statement, not executemany: that raised SQLITE_MISUSE now and then under a burst of finishes
            sql = f"DELETE FROM inbox WHERE id IN ({', '.join('?' * len(ids))})"
            await self._db.write(lambda db: db.execute(sql, ids))

    async def replied(self, session: str, entry_id: int, message_ids: Sequence[str]) -> None:
        sql, ids = "UPDATE inbox SET replies = ? WHERE id = ?", json.dumps(list(message_ids))
        await self._db.write(lambda db: db.execute(sql, (ids, entry_id)))

    async def unfinished(self) -> list[InboxEntry]:
        sql = f"{_ENTRIES} ORDER BY id"
        return _entries(await self._db.read(lambda db: db.execute(sql).fetchall()))

    async def waiting(self, session: str) -> list[InboxEntry]:
        sql = f"{_ENTRIES} WHERE session = ? ORDER BY id"
        return _entries(await self._db.read(lambda db: db.execute(sql, (session,)).fetchall()))

    async def purge_expired(self) -> int:
        sql, now = "DELETE FROM seen_events WHERE expires_at <= ?", self._clock()
        return await self._db.write(lambda db: db.execute(sql, (now,)).rowcount)


def _entries(rows: list[Any]) -> list[InboxEntry]:
    return [InboxEntry(entry, session, event, tuple(json.loads(replies)), job)
            for entry, session, event, replies, job in rows]
