"""The inbox on PostgreSQL; accepting an event is one statement (dedupe key and inbox row together)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import asyncpg

from bot.store.inbox import DEDUPE_TTL, Accepted, InboxEntry
from bot.store.postgres.claims import Fence, Guard
from bot.store.postgres.database import Database

_SEEN_SQL = ("INSERT INTO seen_events (key, expires_at) VALUES ($1, $2) ON CONFLICT (key) "
             "DO UPDATE SET expires_at = excluded.expires_at WHERE seen_events.expires_at <= $3 RETURNING 1")
# The chat's next number is taken under its inbox_order row's lock, held until commit: numbers follow commit order.
ACCEPT_SQL = f"""
WITH fresh AS ({_SEEN_SQL}),
next AS (INSERT INTO inbox_order (session, last) SELECT $4, 1 FROM fresh
         ON CONFLICT (session) DO UPDATE SET last = inbox_order.last + 1 RETURNING last)
INSERT INTO inbox (session, event, job, seq, platform_order) SELECT $4, $5, $6, last, $7 FROM next RETURNING id, seq
"""
_ENTRIES = "SELECT id, session, event, replies, job, seq, platform_order FROM inbox"
_REORDER_SQL = """
WITH fence AS (SELECT bothub_fence($2, $3) AS ok)
UPDATE inbox AS e SET seq = p.seq FROM unnest($4::bigint[], $5::bigint[]) AS p (id, seq), fence
WHERE fence.ok AND e.id = p.id AND e.session = $1
"""


class PostgresInbox:
    def __init__(self, db: Database, clock: Callable[[], float], guard: Guard) -> None:
        self._db = db
        self._clock = clock
        self._guard = guard  # a stale owner's finishes and notes are refused (fenced by the partition's epoch)

    async def seen(self, key: str, ttl: float = DEDUPE_TTL) -> bool:
        now = self._clock()
        return await self._db.pool.fetchval(_SEEN_SQL, key, now + ttl, now) is None

    async def unsee(self, key: str) -> None:
        await self._db.pool.execute("DELETE FROM seen_events WHERE key = $1", key)

    async def accept(self, key: str, session: str, event: str, ttl: float = DEDUPE_TTL,
                     order: int | None = None) -> Accepted | None:
        now = self._clock()
        row = await self._db.pool.fetchrow(ACCEPT_SQL, key, now + ttl, now, session, event, None, order)
        return Accepted(row[0], row[1]) if row is not None else None

    async def reorder(self, session: str, places: Sequence[tuple[int, int]]) -> None:
        async def renumber(fence: Fence) -> None:
            await self._db.pool.execute(_REORDER_SQL, session, *_of(fence), [e for e, _ in places],
                                         [s for _, s in places])

        if places:
            await self._guard(session, renumber)

    async def finish(self, session: str, entry_ids: Sequence[int]) -> None:
        async def finish(fence: Fence) -> None:
            await self._db.pool.execute("SELECT bothub_finish($1::bigint[], $2, $3)", list(entry_ids), *_of(fence))

        if entry_ids:
            await self._guard(session, finish)

    async def replied(self, session: str, entry_id: int, message_ids: Sequence[str]) -> None:
        async def note(fence: Fence) -> None:
            await self._db.pool.execute("SELECT bothub_replied($1, $2, $3, $4)", entry_id, list(message_ids),
                                        *_of(fence))

        await self._guard(session, note)

    async def unfinished(self) -> list[InboxEntry]:
        return _entries(await self._db.pool.fetch(f"{_ENTRIES} ORDER BY id"))

    async def waiting(self, session: str) -> list[InboxEntry]:
        return _entries(await self._db.pool.fetch(f"{_ENTRIES} WHERE session = $1 ORDER BY seq, id", session))

    async def purge_expired(self) -> int:
        status = await self._db.pool.execute("DELETE FROM seen_events WHERE expires_at <= $1", self._clock())
        return int(status.split()[-1])  # "DELETE <n>"


def _of(fence: Fence) -> tuple[int | None, int | None]:
    return fence if fence is not None else (None, None)


def _entries(rows: list[asyncpg.Record]) -> list[InboxEntry]:
    return [InboxEntry(entry, session, event, tuple(replies), job, seq or 0, order)
            for entry, session, event, replies, job, seq, order in rows]
