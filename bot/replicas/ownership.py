"""Which chats this replica answers, when several replicas share one database.

Chats are owned by hash partition (bot/store/claims.py); each replica holds its fair share of them
(bot/replicas/share.py). Any replica accepts an event into the durable inbox. The replica that owns the
chat answers it: the receiving one if it owns the chat's partition or can claim it now; otherwise the
owner, woken by the inbox's NOTIFY. Once a second, each replica takes the partitions of chats with waiting
entries that nobody owns (a replica died), routes what waits in partitions it has just taken, and moves
towards its share. With the embedded store there is one process: every entry is handled where it arrives.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

from bot.replicas.order import ORDER_HOLD, places
from bot.replicas.share import FairShare
from bot.store.claims import Claims, partition
from bot.store.inbox import Accepted, InboxEntry, InboxStore

log = logging.getLogger("bothub.replicas")

SWEEP_EVERY = 1.0  # seconds between looks for unowned chats with waiting entries
IDLE_FORGET = 30.0  # seconds an owned chat's session stays cached here after its last entry
KNOWN = 100_000  # entry ids remembered as taken (routed here), newest kept
SETTLING = 120.0  # seconds after chats changed hands during which arrivals are held for their platform's order


class ChatOwnership:
    def __init__(self, claims: Claims, inbox: InboxStore, route: Callable[[InboxEntry], Awaitable[object]],
                 busy: Callable[[str], bool], forget: Callable[[str], None], abandon: Callable[[], Awaitable[None]],
                 platforms: Callable[[], Sequence[str]], reorders: Callable[[str], bool],
                 working: Callable[[str], bool] = lambda _session: False) -> None:
        self.claims = claims
        self._inbox = inbox
        self._route = route  # routes an entry that arrived elsewhere or earlier
        self._busy = busy  # the chat's lane works through its entries
        self._working = working  # something of the chat runs beside its lane (a background task): it stays here
        self._forget = forget
        self._abandon = abandon
        self._platforms = platforms
        self._reorders = reorders  # the platform may deliver out of its order: arrivals are held back a moment
        self._held: dict[str, list[tuple[Accepted, Callable[[], Awaitable[None]]]]] = {}  # chat → its arrivals
        self._held_woken: set[str] = set()  # held chats with more waiting meanwhile (accepted elsewhere, taken over)
        self._known: OrderedDict[int, None] = OrderedDict()
        self._active: dict[str, float] = {}  # owned chat → when its latest entry came
        self._locks: dict[str, asyncio.Lock] = {}  # one routing at a time per chat keeps the inbox's order
        self._fresh: set[int] = set()  # partitions just taken: their waiting entries go before any arrival
        self._settled_at = 0.0  # monotonic time from which no partition has changed hands here for a while
        self.share = FairShare(claims)
        self._tasks: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._closing = False

    async def start(self) -> None:
        if not self.claims.shared:
            return
        await self.claims.start(self._woken, self._lost, self.share.asked)
        log.info("replica %s: claiming chats through the database", self.claims.replica)
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="ownership-sweep")

    async def stop_taking(self) -> None:
        """Shutdown, first step: no more entries from wake-ups or sweeps (the lanes finish what they have)."""
        self._closing = True
        tasks = [t for t in (self._sweeper, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def stop(self) -> None:
        """Shutdown, last step: give every chat up (the database releases them with the connection)."""
        await self.stop_taking()
        await self.claims.stop()

    @property
    def settling(self) -> bool:
        """Chats changed hands here lately (a replica died, joined or started): a platform may now redeliver what
        their old owner held, out of its order. In steady state arrivals are not held back (bot/replicas/order.py)."""
        return self.claims.shared and time.monotonic() < self._settled_at

    async def arrived(self, session: str, entry: int, route_here: Callable[[], Awaitable[None]]) -> bool:
        """An entry this replica accepted: routed here if the chat is ours (claimed now if nobody owns it);
        False when it waits for the replica that owns the chat."""
        if not self.claims.shared:
            self._take(session, entry)
            await route_here()
            return True
        if self.claims.holds(session):
            async with self._lock(session):
                if partition(session) in self._fresh:  # just taken: the older entries go first, ours with them
                    await self._route_waiting(session)
                if entry not in self._known:  # else a pull routed it already
                    self._take(session, entry)
                    await route_here()
            return True
        if not await self._claim(session):
            if self.claims.guest:  # its own chat, in a replica's partition: asked for, handed over once idle there
                self.when_owned(session, lambda: None)  # owning it pulls what waits, this entry with it
            return False
        await self._pull(session)  # older entries first (left by a dead owner, or accepted elsewhere), then ours
        return True

    def hold(self, session: str, accepted: Accepted, route_here: Callable[[], Awaitable[None]]) -> None:
        """An arrival of a platform that may deliver out of its order (bot/replicas/order.py): routed once the
        chat's first arrival has waited ORDER_HOLD, with the chat's other arrivals meanwhile, in the platform's
        order (the platform's delivery is acknowledged at once: the entry is stored)."""
        batch = self._held.get(session)
        if batch is not None:
            batch.append((accepted, route_here))
            return
        self._held[session] = [(accepted, route_here)]
        self._spawn(self._release_after_hold(session))

    async def _hold_woken(self, session: str) -> None:
        """Another replica accepted an entry for a chat of this one, of a platform that may reorder."""
        self._held_woken.add(session)
        if session not in self._held:
            self._held[session] = []
            await self._release_after_hold(session)

    async def _release_after_hold(self, session: str) -> None:
        await asyncio.sleep(ORDER_HOLD)
        await self._release(session)

    async def _release(self, session: str) -> None:
        batch = self._held.pop(session, [])
        woken = session in self._held_woken
        self._held_woken.discard(session)
        if len(batch) == 1 and not woken:  # nothing else came: no reordering, no database read
            accepted, route_here = batch[0]
            await self.arrived(session, accepted.id, route_here)
            return
        if not (self.claims.holds(session) or await self._claim(session)):
            return  # another replica owns the chat: its owner holds the entries back likewise, and routes them
        async with self._lock(session):
            entries = await self._inbox.waiting(session)
            ours = {accepted.id for accepted, _ in batch}
            movable = {e.id for e in entries if e.id in ours or (woken and e.id not in self._known)}
            moved = dict(places(entries, movable))
            if moved:
                await self._inbox.reorder(session, list(moved.items()))
                log.info("replica %s: %d entr(ies) of %s moved to the platform's order", self.claims.replica,
                         len(moved), session)
            # with replicas every entry routed here is known; the one process routes only what it held back (a
            # start's resume routes the rest)
            routable = {e.id for e in entries if e.id not in self._known} if self.claims.shared else movable
            for entry in sorted((dataclasses.replace(e, seq=moved.get(e.id, e.seq)) for e in entries
                                 if e.id in routable), key=lambda e: e.seq):
                if entry.id not in self._known and self.claims.holds(session):
                    self._take(session, entry.id)
                    await self._route(entry)

    def when_owned(self, session: str, start: Callable[[], None]) -> None:
        """Work that is not an inbox entry (a dashboard action) starts in the chat's lane once this replica owns
        the chat: now, or after its owner, asked for the chat's partition, lets it go (once its chats are
        idle) or dies."""
        self._spawn(self._start_when_owned(session, start))

    async def _start_when_owned(self, session: str, start: Callable[[], None]) -> None:
        while not await self._own(session):
            if self._closing:
                return
            await self.claims.want(session)
            await asyncio.sleep(SWEEP_EVERY)
        start()

    async def _own(self, session: str) -> bool:
        if not self.claims.shared or self.claims.holds(session):
            return True
        if not await self._claim(session):
            return False
        self._active[session] = time.monotonic()
        await self._pull(session)  # messages waiting for this chat go first
        return True

    async def _claim(self, session: str) -> bool:
        if not await self.claims.claim(session):
            return False
        self._fresh.add(partition(session))
        self._forget(session)  # cached from an earlier claim: another replica may have moved on since
        return True

    def _take(self, session: str, entry: int) -> None:
        self._known[entry] = None
        while len(self._known) > KNOWN:
            self._known.popitem(last=False)
        self._active[session] = time.monotonic()

    def _lock(self, session: str) -> asyncio.Lock:
        lock = self._locks.get(session)
        if lock is None:
            lock = self._locks[session] = asyncio.Lock()
        return lock

    async def _pull(self, session: str) -> None:
        """Route this chat's waiting entries that are not routed here yet, oldest first."""
        async with self._lock(session):
            await self._route_waiting(session)

    async def _route_waiting(self, session: str) -> None:
        if session in self._held:
            self._held_woken.add(session)  # held back for the platform's order: the hold's end routes them all
            return
        for entry in await self._inbox.waiting(session):
            if entry.id not in self._known and self.claims.holds(session):
                self._take(session, entry.id)
                await self._route(entry)

    def _woken(self, entry: int, session: str) -> None:
        """NOTIFY: some replica accepted `entry`; only this chat's owner acts on it."""
        if entry not in self._known and self.claims.holds(session) and not self._closing:
            held = self.settling and self._reorders(session.split(":", 1)[0])
            self._spawn(self._hold_woken(session) if held else self._pull(session))

    def _lost(self) -> None:
        """The claims are gone with their connection: stop answering now; another replica takes over."""
        self._spawn(self._give_up())

    async def _give_up(self) -> None:
        await self._abandon()
        self._known.clear()
        self._active.clear()
        self._locks.clear()
        self._fresh.clear()
        self.share.clear()

    def _spawn(self, coro: Awaitable[None]) -> None:
        async def guarded() -> None:
            try:
                await coro
            except Exception:
                log.exception("replica %s: taking chats over failed", self.claims.replica)

        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _sweep_forever(self) -> None:
        while True:
            try:
                await self.sweep()
            except Exception:
                log.exception("replica %s: sweep failed", self.claims.replica)
            await asyncio.sleep(SWEEP_EVERY)

    def _kept(self, session: str) -> bool:
        """The chat is in use here: its partition is not handed on, its session not forgotten."""
        return self._busy(session) or self._working(session) or self._lock(session).locked()

    @property
    def chats(self) -> list[str]:
        """The chats owned here that had an entry in the last IDLE_FORGET seconds (for /readyz)."""
        return sorted(s for s in self._active if self.claims.holds(s))

    async def sweep(self) -> None:
        """Take the partitions of unowned chats with waiting entries and route what waits in partitions taken
        since the last sweep (and in any chat of ours whose wake-up went missing); then move towards this
        replica's fair share, and forget chats idle for IDLE_FORGET."""
        fresh = set(self._fresh)  # taken since the last sweep (the balance, a claim on arrival)
        held = self.claims.partitions
        found = await self.claims.sweep(self._platforms())
        orphans = {partition(s) for s in found} - held
        self._fresh.update(orphans)
        fresh.update(orphans)
        for session in found:
            if partition(session) in fresh:
                log.info("replica %s: took over chat %s", self.claims.replica, session)
                self._forget(session)
            elif self._busy(session):
                continue  # its lane is working through them
            await self._pull(session)
        self._fresh.difference_update(fresh)
        busy = {partition(s) for s in self._active if self._kept(s)}
        taken, away = await self.share.balance(busy | self._fresh)
        self._fresh.update(taken)
        if taken or orphans:  # chats changed hands: what their old owner left may come again out of order
            self._settled_at = time.monotonic() + SETTLING
        if taken or away:
            log.info("replica %s: took %d partition(s), handed back %d; holds %d", self.claims.replica, len(taken),
                     len(away), len(self.claims.partitions))
        gone = set(away)
        cutoff = time.monotonic() - IDLE_FORGET
        for session in [s for s, at in self._active.items() if partition(s) in gone or at < cutoff]:
            if partition(session) in gone or not self._kept(session):
                self._active.pop(session, None)
                self._locks.pop(session, None)
                self._forget(session)
