"""The inbox on SQLite: dedupe keys expiring by the wall clock (a restart does not forget them), and the
accepted events not answered yet."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from bot.store.inbox import DEDUPE_TTL, Accepted, InboxEntry
from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database

_SEEN_SQL = ("INSERT INTO seen_events (key, expires_at) VALUES (?, ?) ON CONFLICT (key) "
             "DO UPDATE SET expires_at = excluded.expires_at WHERE seen_events.expires_at <= ?")
_ENTRIES = "SELECT id, session, event, replies, job, seq, platform_order FROM inbox"
_NEXT_SQL = ("INSERT INTO inbox_order (session, last) VALUES (?, 1) "
             "ON CONFLICT (session) DO UPDATE SET last = last + 1 RETURNING last")


def queue(db: sqlite3.Connection, key: str, session: str, event: str, now: float, ttl: float = DEDUPE_TTL,
          job: int | None = None, order: int | None = None) -> Accepted | None:
    """Record the dedupe key and queue the event as the chat's next in sequence, in the caller's transaction;
    None if the key was seen."""
    if db.execute(_SEEN_SQL, (key, now + ttl, now)).rowcount == 0:
        return None
    seq = int(db.execute(_NEXT_SQL, (session,)).fetchone()[0])
    cur = db.execute("INSERT INTO inbox (session, event, accepted_at, job, seq, platform_order) "
                     "VALUES (?, ?, ?, ?, ?, ?)", (session, event, now_iso(), job, seq, order))
    assert cur.lastrowid is not None
    return Accepted(cur.lastrowid, seq)


class SqliteInbox:
    def __init__(self, db: Database, clock: Callable[[], float]) -> None:
        self._db = db
        self._clock = clock

    async def seen(self, key: str, ttl: float = DEDUPE_TTL) -> bool:
        now = self._clock()
        return await self._db.write(lambda db: db.execute(_SEEN_SQL, (key, now + ttl, now)).rowcount == 0)

    async def unsee(self, key: str) -> None:
        await self._db.write(lambda db: db.execute("DELETE FROM seen_events WHERE key = ?", (key,)))

    async def accept(self, key: str, session: str, event: str, ttl: float = DEDUPE_TTL,
                     order: int | None = None) -> Accepted | None:
        now = self._clock()
        return await self._db.write(lambda db: queue(db, key, session, event, now, ttl, order=order))

    async def reorder(self, session: str, places: Sequence[tuple[int, int]]) -> None:
        rows = [(seq, entry, session) for entry, seq in places]
        if rows:
            await self._db.write(lambda db: db.executemany("UPDATE inbox SET seq = ? WHERE id = ? AND session = ?",
                                                           rows))

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
        sql = f"{_ENTRIES} WHERE session = ? ORDER BY seq, id"
        return _entries(await self._db.read(lambda db: db.execute(sql, (session,)).fetchall()))

    async def purge_expired(self) -> int:
        sql, now = "DELETE FROM seen_events WHERE expires_at <= ?", self._clock()
        return await self._db.write(lambda db: db.execute(sql, (now,)).rowcount)


def _entries(rows: list[Any]) -> list[InboxEntry]:
    return [InboxEntry(entry, session, event, tuple(json.loads(replies)), job, seq or 0, order)
            for entry, session, event, replies, job, seq, order in rows]
