"""Claims on PostgreSQL: session-level advisory locks on one dedicated connection per replica.

The server releases a session's advisory locks when its connection ends, so a replica that dies (or is cut
off) loses its chats and roles without any lease clock. The same connection LISTENs for accepted inbox
entries (a trigger NOTIFYs each one). It is checked every second; when it fails, the replica drops every
claim at once and tells the hub to stop working on its chats, before the server (TCP keepalive, ~11 s)
lets another replica take them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import asyncpg

from bot.store.claims import Lost, Wake

log = logging.getLogger("bothub.replicas")

T = TypeVar("T")
CHANNEL = "bothub_inbox"
PRESENCE = 0x626F7468  # advisory lock class (two-key form) under which every replica announces itself
CHECK_EVERY = 1.0  # seconds between liveness checks of the claims connection
CHECK_TIMEOUT = 4.0  # a check slower than this counts as a dead connection (generous: loaded machines)
RECONNECT_EVERY = 1.0
# The server drops a silent connection after 5 + 3 × 2 s; the replica gives up its claims after at most
# CHECK_EVERY + CHECK_TIMEOUT, well before that.
KEEPALIVE = {"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2", "tcp_keepalives_count": "3"}

_CHAT_KEY = "hashtextextended('chat:' || {}, 0)"
# Entries younger than a second are left to the replica that accepted them (it claims the chat itself); the
# sweep is for chats nobody took: a dead owner's, or one released just as an entry came.
_ROLE_KEY = "hashtextextended('role:' || $1, 0)"
_SWEEP_SQL = f"""
SELECT session FROM (SELECT DISTINCT session FROM inbox WHERE split_part(session, ':', 1) = ANY($1::text[])
                     AND accepted_at < now() - interval '1 second') AS w
WHERE CASE WHEN session = ANY($2::text[]) THEN true ELSE pg_try_advisory_lock({_CHAT_KEY.format('session')}) END
"""
_REPLICAS_SQL = """
SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = $1::oid
AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


class ClaimsUnavailable(Exception):
    """The claims connection is down: this replica holds nothing until it is back."""


class PostgresClaims:
    shared = True

    def __init__(self, url: str, replica: str, own_backends: set[int] | None = None) -> None:
        self.replica = replica
        self._url = url
        self._own = own_backends if own_backends is not None else set()  # this replica's own pool: its accepts
        self._conn: asyncpg.Connection | None = None
        self._busy = asyncio.Lock()  # one statement at a time on the connection
        self._sessions: set[str] = set()
        self._roles: set[str] = set()
        self._wake: Wake | None = None
        self._lost: Lost | None = None
        self._watch: asyncio.Task[None] | None = None

    @property
    def sessions(self) -> frozenset[str]:
        return frozenset(self._sessions)

    async def start(self, wake: Wake, lost: Lost) -> None:
        self._wake, self._lost = wake, lost
        await self._connect()
        self._watch = asyncio.create_task(self._keep_alive(), name="claims-keepalive")

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
        conn, self._conn = self._conn, None
        self._sessions.clear()
        self._roles.clear()
        if conn is not None:
            await conn.close()  # the server releases every lock this session held

    async def _connect(self) -> None:
        conn = await asyncpg.connect(self._url, server_settings={"application_name": f"bothub {self.replica}"[:63],
                                                                 **KEEPALIVE})
        try:
            if not await conn.fetchval("SELECT pg_try_advisory_lock($1, hashtext($2))", PRESENCE, self.replica):
                raise RuntimeError(f"another replica is connected with the id {self.replica!r}; give each its own "
                                   "(BOTHUB_REPLICA_ID)")
            await conn.add_listener(CHANNEL, self._notified)
        except BaseException:
            await conn.close()
            raise
        self._conn = conn

    def _notified(self, _conn: Any, pid: int, _channel: str, payload: str) -> None:
        if pid in self._own:
            return  # accepted by this replica, which routes it itself
        entry, _, session = payload.partition(" ")
        if self._wake is not None and entry.isdigit():
            self._wake(int(entry), session)

    async def _keep_alive(self) -> None:
        """Check the connection every second; when it is gone, give everything up, then reconnect."""
        while True:
            await asyncio.sleep(CHECK_EVERY if self._conn is not None else RECONNECT_EVERY)
            if self._conn is None:
                try:
                    await self._connect()
                    log.info("replica %s: claims connection back", self.replica)
                except (OSError, asyncpg.PostgresError, TimeoutError) as e:
                    log.warning("replica %s: cannot reconnect for claims: %s", self.replica, e)
                continue
            with contextlib.suppress(ClaimsUnavailable):  # a failed check has dropped everything already
                await self._run(lambda conn: conn.fetchval("SELECT 1", timeout=CHECK_TIMEOUT))

    def _drop(self, why: BaseException) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        log.error("replica %s: claims connection lost (%s); giving up %d chat(s) and %s", self.replica, why,
                  len(self._sessions), sorted(self._roles) or "no roles")
        conn.terminate()
        self._sessions.clear()
        self._roles.clear()
        if self._lost is not None:
            self._lost()

    async def _run(self, statement: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        async with self._busy:
            conn = self._conn
            if conn is None:
                raise ClaimsUnavailable
            try:
                return await statement(conn)
            except (OSError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError, TimeoutError) as e:
                self._drop(e)
                raise ClaimsUnavailable from e

    def holds(self, session: str) -> bool:
        return session in self._sessions

    async def claim(self, session: str) -> bool:
        async def try_lock(conn: asyncpg.Connection) -> bool:
            if session in self._sessions:  # claimed while this call waited for the connection: the lock is
                return True  # reentrant, and taking it twice would outlive one release
            return bool(await conn.fetchval(f"SELECT pg_try_advisory_lock({_CHAT_KEY.format('$1')})", session))

        if session in self._sessions:
            return True
        try:
            got = await self._run(try_lock)
        except ClaimsUnavailable:
            return False
        if got:
            self._sessions.add(session)
        return bool(got)

    async def release(self, sessions: Sequence[str]) -> None:
        mine = [s for s in sessions if s in self._sessions]
        if not mine:
            return
        self._sessions.difference_update(mine)
        sql = f"SELECT pg_advisory_unlock({_CHAT_KEY.format('s')}) FROM unnest($1::text[]) AS s"
        with contextlib.suppress(ClaimsUnavailable):  # the connection is gone, and the locks with it
            await self._run(lambda c: c.execute(sql, mine))

    async def sweep(self, platforms: Sequence[str]) -> list[str]:
        try:
            rows = await self._run(lambda c: c.fetch(_SWEEP_SQL, list(platforms), list(self._sessions)))
        except ClaimsUnavailable:
            return []
        found = [row[0] for row in rows]
        self._sessions.update(found)
        return found

    async def replicas(self) -> int:
        try:
            return int(await self._run(lambda c: c.fetchval(_REPLICAS_SQL, PRESENCE)))
        except ClaimsUnavailable:
            return 1

    @property
    def roles(self) -> frozenset[str]:
        return frozenset(self._roles)

    async def lead(self, role: str) -> bool:
        if role in self._roles:
            return True
        try:
            got = await self._run(lambda c: c.fetchval(f"SELECT pg_try_advisory_lock({_ROLE_KEY})", role))
        except ClaimsUnavailable:
            return False
        if got:
            self._roles.add(role)
        return bool(got)

    async def resign(self, role: str) -> None:
        if role not in self._roles:
            return
        self._roles.discard(role)
        with contextlib.suppress(ClaimsUnavailable):
            await self._run(lambda c: c.execute(f"SELECT pg_advisory_unlock({_ROLE_KEY})", role))
