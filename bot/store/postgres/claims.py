"""Claims on PostgreSQL: session-level advisory locks on one dedicated connection per replica.

A chat is owned through its partition's lock (PARTITIONS locks at most, whatever the number of chats: one
lock per chat filled the server's shared lock table at ~12 500 chats). The server releases a session's
advisory locks when its connection ends, so a replica that dies (or is cut off) loses its partitions and
roles without any lease clock. The same connection LISTENs for accepted inbox entries (a trigger NOTIFYs
each one) and for partitions another replica wants. It is checked every second; when it fails, the replica drops every
claim at once and tells the hub to stop working on its chats, before the server (TCP keepalive, ~11 s)
lets another replica take them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any, Protocol, TypeVar

import asyncpg

from bot.store.claims import PARTITIONS, Lost, NotOwner, Wake, Wanted, partition
from bot.store.postgres.schema_replicas import FENCED

log = logging.getLogger("bothub.replicas")

T = TypeVar("T")
Fence = tuple[int, int] | None  # (partition, epoch) a write of a chat names; None: a write outside ownership


class Guard(Protocol):
    """Makes a write of a chat (given its fence) unless another replica owns the chat: then NotOwner, and
    nothing is written (PostgresClaims.write)."""

    async def __call__(self, session: str, statement: Callable[[Fence], Awaitable[T]]) -> T: ...

CHANNEL = "bothub_inbox"
PRESENCE = 0x626F7468  # advisory lock class (two-key form) under which every replica announces itself
CHECK_EVERY = 0.5  # seconds between heartbeats (each checks the claims connection too)
CHECK_TIMEOUT = 4.0  # a check slower than this counts as a dead connection (generous: loaded machines)
RECONNECT_EVERY = 1.0
# A replica whose heartbeat (written each CHECK_EVERY from its event loop) is older than this is silent: frozen
# (SIGSTOP, a blocked loop) or cut off. Its peers end its claims connection, which frees its partitions; and it
# owns nothing from that moment by its own clock too: on waking it writes nothing before a fresh heartbeat went
# through, which fails once its connection was ended (then it drops its claims and stops its runs).
SILENT_AFTER = 3.5
# The server drops a silent connection after 5 + 3 × 2 s; the replica gives up its claims after at most
# CHECK_EVERY + CHECK_TIMEOUT, well before that.
KEEPALIVE = {"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2", "tcp_keepalives_count": "3"}

WANT_CHANNEL = "bothub_want"
PARTITION = PRESENCE + 1  # advisory lock class of the chat partitions: (PARTITION, 0 … PARTITIONS-1)
GUEST = PRESENCE + 2  # a guest's presence (`bothub chat` beside replicas): unique ids, not counted as a replica
_ROLE_KEY = "hashtextextended('role:' || $1, 0)"
# The partitions nobody holds, up to $2 of them; CASE keeps the lock call off those held here already (a
# second lock on a held one would outlive one release), and the scan stops at the limit (no more locks).
_TAKE_SQL = f"""
SELECT p FROM generate_series(0, {PARTITIONS - 1}) AS p
WHERE CASE WHEN p = ANY($1::int[]) THEN false ELSE pg_try_advisory_lock({PARTITION}, p) END LIMIT $2
"""
_JOIN_SQL = """
INSERT INTO bothub_replicas (id, backend, beat) VALUES ($1, pg_backend_pid(), now())
ON CONFLICT (id) DO UPDATE SET backend = excluded.backend, beat = excluded.beat
"""
# The heartbeat, and the end of every silent peer's claims connection (its locks go with it), in one statement.
_BEAT_SQL = """
WITH beat AS (UPDATE bothub_replicas SET beat = now() WHERE id = $1 AND backend = pg_backend_pid() RETURNING id),
silent AS (SELECT r.id FROM bothub_replicas AS r JOIN pg_stat_activity AS a
                ON a.pid = r.backend AND a.application_name = left('bothub ' || r.id, 63)
           WHERE CASE WHEN r.id <> $1 AND r.beat < now() - make_interval(secs => $2)
                      THEN pg_terminate_backend(r.backend) ELSE false END)
SELECT EXISTS (SELECT 1 FROM beat), array(SELECT id FROM silent)
"""
_TAKE_THESE_SQL = f"SELECT p FROM unnest($1::int[]) AS p WHERE pg_try_advisory_lock({PARTITION}, p)"
_RELEASE_SQL = f"SELECT pg_advisory_unlock({PARTITION}, p) FROM unnest($1::int[]) AS p"
# Partitions just locked get their next epoch (schema_replicas.py: every write of their chats names it).
_EPOCH_SQL = """
INSERT INTO bothub_partitions (p, epoch, owner) SELECT p, 1, $2 FROM unnest($1::int[]) AS p
ON CONFLICT (p) DO UPDATE SET epoch = bothub_partitions.epoch + 1, owner = excluded.owner RETURNING p, epoch
"""
# Entries younger than a second in a partition nobody holds are left to the replica that accepted them (it
# claims the partition itself); the sweep is for chats nobody took: a dead owner's, or one released just then.
_WAITING_SQL = """
SELECT session, min(accepted_at) < now() - interval '1 second' FROM inbox
WHERE split_part(session, ':', 1) = ANY($1::text[]) GROUP BY session
"""
_REPLICAS_SQL = """
SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = $1::oid
AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


class ClaimsUnavailable(Exception):
    """The claims connection is down: this replica holds nothing until it is back."""


class PostgresClaims:
    shared = True

    def __init__(self, url: str, replica: str, own_backends: set[int] | None = None, guest: bool = False) -> None:
        self.replica = replica
        self.guest = guest
        self._url = url
        self._own = own_backends if own_backends is not None else set()  # this replica's own pool: its accepts
        self._conn: asyncpg.Connection | None = None
        self._busy = asyncio.Lock()  # one statement at a time on the connection
        self._partitions: set[int] = set()
        self._epochs: dict[int, int] = {}  # partition → the epoch this replica took it at
        self._roles: set[str] = set()
        self._wake: Wake | None = None
        self._lost: Lost | None = None
        self._wanted: Wanted | None = None
        self._watch: asyncio.Task[None] | None = None
        self._beat_at = 0.0  # monotonic: the last heartbeat the server took

    @property
    def partitions(self) -> frozenset[int]:
        return frozenset(self._partitions)

    async def start(self, wake: Wake, lost: Lost, wanted: Wanted) -> None:
        self._wake, self._lost, self._wanted = wake, lost, wanted
        await self._connect()
        self._watch = asyncio.create_task(self._keep_alive(), name="claims-keepalive")

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
        async with self._busy:  # a statement a cancelled caller left running finishes first
            conn, self._conn = self._conn, None
            self._partitions.clear()
            self._epochs.clear()
            self._roles.clear()
            if conn is not None:
                await conn.close()  # the server releases every lock this session held

    async def _connect(self) -> None:
        conn = await asyncpg.connect(self._url, server_settings={"application_name": f"bothub {self.replica}"[:63],
                                                                 **KEEPALIVE})
        try:
            presence = GUEST if self.guest else PRESENCE
            if not await conn.fetchval("SELECT pg_try_advisory_lock($1, hashtext($2))", presence, self.replica):
                raise RuntimeError(f"another replica is connected with the id {self.replica!r}; give each its own "
                                   "(BOTHUB_REPLICA_ID)")
            await conn.execute(_JOIN_SQL, self.replica)
            await conn.add_listener(CHANNEL, self._notified)
            await conn.add_listener(WANT_CHANNEL, self._want_heard)
        except BaseException:
            await conn.close()
            raise
        self._conn, self._beat_at = conn, time.monotonic()

    def _notified(self, _conn: Any, pid: int, _channel: str, payload: str) -> None:
        if pid in self._own:
            return  # accepted by this replica, which routes it itself
        entry, _, session = payload.partition(" ")
        if self._wake is not None and entry.isdigit():
            self._wake(int(entry), session)

    def _want_heard(self, _conn: Any, pid: int, _channel: str, payload: str) -> None:
        if payload.isdigit() and int(payload) in self._partitions and self._wanted is not None:
            self._wanted(int(payload))

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
            silent = time.monotonic() - self._beat_at
            if silent > SILENT_AFTER:  # frozen or starved: if its peers ended its connection, this beat fails
                log.warning("replica %s: no heartbeat for %.1f s; it owns nothing unless this one goes through",
                            self.replica, silent)
            with contextlib.suppress(ClaimsUnavailable):  # a failed check has dropped everything already
                await self._run(self._beat)

    async def _beat(self, conn: asyncpg.Connection) -> None:
        sent = time.monotonic()  # the server's beat is no older: this replica never thinks itself live longer
        alive, ended = await conn.fetchrow(_BEAT_SQL, self.replica, SILENT_AFTER, timeout=CHECK_TIMEOUT)
        if not alive:
            raise asyncpg.InterfaceError("this replica's heartbeat row belongs to another connection")
        self._beat_at = sent
        for peer in ended:
            log.warning("replica %s: replica %s sent no heartbeat for %s s; ended its claims", self.replica, peer,
                        SILENT_AFTER)

    @property
    def live(self) -> bool:
        """Connected, and the latest heartbeat is recent: what this replica holds is still its own."""
        return self._conn is not None and time.monotonic() - self._beat_at <= SILENT_AFTER

    def _drop(self, why: BaseException) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        log.error("replica %s: claims connection lost (%s); giving up %d partition(s) and %s", self.replica, why,
                  len(self._partitions), sorted(self._roles) or "no roles")
        conn.terminate()
        self._partitions.clear()
        self._epochs.clear()
        self._roles.clear()
        if self._lost is not None:
            self._lost()

    async def _run(self, statement: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        """One statement at a time on the claims connection, finished even when its caller is cancelled (a webhook
        request the balancer gave up on, a halted run): cut mid-statement, asyncpg leaves the connection busy and
        the next statement fails ("another operation is in progress"), which dropped every claim under load."""
        task = asyncio.ensure_future(self._locked(statement))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # a cancelled caller's outcome: consumed
        return await asyncio.shield(task)

    async def _locked(self, statement: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        async with self._busy:
            conn = self._conn
            if conn is None:
                raise ClaimsUnavailable
            try:
                return await statement(conn)
            except (OSError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError, asyncpg.InternalClientError,
                    TimeoutError) as e:  # an internal client error leaves the connection in no known state
                self._drop(e)
                raise ClaimsUnavailable from e

    async def check(self, session: str) -> Fence:
        """Before a write of a chat's tree or inbox: the fence the write names (the chat's partition and the epoch
        it was taken at), or NotOwner when another replica may own it now; None before claims are started (tools
        that open the store without them write unfenced). A heartbeat that is only late (a slow statement, a
        stalled loop) is sent now first: its peers end a replica that was silent too long, and then this beat
        fails."""
        if self._watch is None:
            return None
        if not self.holds(session) and self._conn is not None and partition(session) in self._partitions:
            with contextlib.suppress(ClaimsUnavailable):
                await self._run(self._beat)
        fence = self._epochs.get(partition(session))
        if not self.holds(session) or fence is None:
            raise NotOwner(f"replica {self.replica} does not own {session} now")
        return partition(session), fence

    async def write(self, session: str, statement: Callable[[Fence], Awaitable[T]]) -> T:
        """Run a write of the chat that names its fence (`check`). Refused by the partition's epoch, another
        replica has taken the partition over while this one thought itself live: it drops every claim, as when its
        connection fails (its runs stop; it reconnects and takes chats anew), and raises NotOwner; nothing was
        written."""
        fence = await self.check(session)
        try:
            return await statement(fence)
        except asyncpg.PostgresError as e:
            if e.sqlstate != FENCED:
                raise
            refused = NotOwner(f"replica {self.replica} no longer owns {session}: {e}")
            self._drop(refused)  # another replica took a partition while this one thought it live: trust none
            raise refused from e

    def holds(self, session: str) -> bool:
        return partition(session) in self._partitions and self.live

    async def confirm(self, session: str) -> None:
        await self.check(session)

    async def claim(self, session: str) -> bool:
        return partition(session) in await self._take_these([partition(session)])

    async def _take_these(self, wanted: list[int]) -> set[int]:
        """Lock those of `wanted` not held here (checked with the connection in hand: the lock is reentrant, and
        taking it twice would outlive one release); returns every one of them held here afterwards."""
        async def try_locks(conn: asyncpg.Connection) -> None:
            fresh = [p for p in wanted if p not in self._partitions]
            if fresh:
                await self._owned(conn, [row[0] for row in await conn.fetch(_TAKE_THESE_SQL, fresh)])

        if any(p not in self._partitions for p in wanted):
            with contextlib.suppress(ClaimsUnavailable):
                await self._run(try_locks)
        return self._partitions.intersection(wanted)

    async def _owned(self, conn: asyncpg.Connection, locked: list[int]) -> None:
        """Partitions just locked are this replica's once their epochs are bumped: from then on the previous
        owner's writes of their chats fail. If the bump fails (not the connection), the locks go back."""
        if not locked:
            return
        try:
            rows = await conn.fetch(_EPOCH_SQL, locked, self.replica)
        except asyncpg.PostgresError:
            await conn.execute(_RELEASE_SQL, locked)
            raise
        self._epochs.update((p, epoch) for p, epoch in rows)
        self._partitions.update(locked)

    async def take(self, count: int, avoid: Collection[int] = ()) -> list[int]:
        async def take_free(conn: asyncpg.Connection) -> list[int]:
            got = [row[0] for row in await conn.fetch(_TAKE_SQL, list(self._partitions.union(avoid)), count)]
            await self._owned(conn, got)
            return got

        if count <= 0:
            return []
        try:
            return await self._run(take_free)
        except ClaimsUnavailable:
            return []

    async def release(self, partitions: Collection[int]) -> None:
        mine = [p for p in partitions if p in self._partitions]
        if not mine:
            return
        self._partitions.difference_update(mine)
        for p in mine:
            self._epochs.pop(p, None)
        with contextlib.suppress(ClaimsUnavailable):  # the connection is gone, and the locks with it
            await self._run(lambda c: c.execute(_RELEASE_SQL, mine))

    async def want(self, session: str) -> None:
        with contextlib.suppress(ClaimsUnavailable):
            await self._run(lambda c: c.execute("SELECT pg_notify($1, $2)", WANT_CHANNEL, str(partition(session))))

    async def sweep(self, platforms: Sequence[str]) -> list[str]:
        try:
            rows = await self._run(lambda c: c.fetch(_WAITING_SQL, list(platforms)))
        except ClaimsUnavailable:
            return []
        orphaned = {partition(session) for session, stale in rows if stale} - self._partitions
        if orphaned:
            await self._take_these(sorted(orphaned))
        return [session for session, _ in rows if self.holds(session)]

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
