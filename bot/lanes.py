"""The one door into a chat's lane: all work for a chat runs there, one piece at a time, on the replica that
owns the chat, with the chat's cached session. Nothing else submits to a lane or reads the session cache.

What the door guarantees, with several replicas on one database (with the embedded store there is one
process, which owns every chat, and everything runs at once where it arrives):

- An inbox entry (a platform message, a command such as /retry, an HTTP API request) is routed only on the
  chat's owner: `arrive` routes it here when this replica owns the chat or can claim it now; otherwise it
  waits in the inbox and the owner pulls it (NOTIFY, or the sweep). Routed, it enters the lane with `run`
  and its entry id, behind no entry accepted after it.
- A scheduled job's run is an inbox entry too (the scheduler queues it with the job's next due time), so it
  is routed the same way and taken over with its chat when its replica dies.
- Other work (a dashboard action) enters with `run` alone and starts only once this replica owns the chat:
  at once when it does or can claim it, else after the owner, asked for the chat's partition, hands it
  over (once the chat is idle) or dies; never while another replica owns it. Such work is held in memory:
  if this process stops before it owns the chat, the work is gone.
- A background task's run (bot/hub/tasks.py) is an inbox entry of its chat, routed like any other, that runs
  `aside`: in a lane of its own beside the chat's, so the chat goes on answering meanwhile; it runs only on the
  chat's owner, its writes are fenced by the chat's partition, and a halt or shutdown cuts it with the chat's
  runs (its entry stays for the next owner). The chat's partition is not handed to another replica while it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from bot.chats.sessions import Lane, Session, SessionKey, Sessions
from bot.httpkit.fence import answering
from bot.replicas.ownership import ChatOwnership
from bot.store.claims import Claims, NotOwner
from bot.store.inbox import Accepted, InboxEntry, InboxStore

log = logging.getLogger("bothub.replicas")

Work = Callable[[Session], Awaitable[None]]  # runs in the chat's lane with its (cached, maybe unloaded) session
Route = Callable[[InboxEntry], Awaitable[bool]]  # routes an entry pulled here; False: its platform is not here
Accept = Callable[[], Awaitable[Accepted | None]]  # stores an event in the inbox; None for a redelivery
Reorders = Callable[[str], bool]  # the platform may deliver out of its order (Capabilities.reorders)


class Lanes:
    def __init__(self, claims: Claims, inbox: InboxStore) -> None:
        self._sessions = Sessions()
        self._inbox = inbox
        self._route: Route | None = None
        self._platforms: Callable[[], Sequence[str]] = tuple
        self._reorders: Reorders = lambda _platform: False
        self._halting = False  # runs are being cancelled for good: their inbox entries wait for the next owner
        self._stopping = False
        self._aside: dict[str, tuple[str, Lane]] = {}  # name → (its chat's storage key, its lane)
        self.owners = ChatOwnership(claims, inbox, self._pulled, self._sessions.busy_at, self.forget, self.halt,
                                    lambda: self._platforms(), lambda platform: self._reorders(platform),
                                    self._aside_of)

    @property
    def shared(self) -> bool:
        """Other replicas may own chats (a shared database)."""
        return self.owners.claims.shared

    async def start(self, route: Route, platforms: Callable[[], Sequence[str]], reorders: Reorders) -> None:
        """Take part in ownership; `route` gets the entries this replica pulls (like an adapter's on_message),
        `platforms` says which platforms' chats it may claim and `reorders` which of them deliver out of order."""
        self._route, self._platforms, self._reorders = route, platforms, reorders
        await self.owners.start()

    async def _pulled(self, entry: InboxEntry) -> bool:
        assert self._route is not None, "entries are pulled only after start"
        return await self._route(entry)

    def session(self, key: SessionKey) -> Session:
        """The chat's cached session, for the gate (its language, where it last spoke); work gets it from `run`."""
        return self._sessions.get(key)

    async def arrive(self, key: SessionKey, accept: Accept, route: Callable[[Accepted], Awaitable[None]]) -> None:
        """An event for the chat: `accept` puts it in the inbox, then `route` runs here if this replica owns
        the chat (claimed now if nobody does); else the owner pulls it. One arrival at a time per chat, so the
        inbox's order is the lane's; on a platform that may deliver out of its order, while chats are changing
        hands between replicas, the entry is routed after a short hold in the platform's order
        (bot/replicas/order.py)."""
        async with self._sessions.get(key).intake:
            accepted = await accept()
            if accepted is None:
                return
            if self.owners.settling and self._reorders(key.platform):
                self.owners.hold(key.storage_key, accepted, lambda: route(accepted))
            else:
                await self.owners.arrived(key.storage_key, accepted.id, lambda: route(accepted))

    def run(self, key: SessionKey, work: Work, entry: int | None = None) -> None:
        """Run `work` in the chat's lane on the chat's owner (the module docstring says when). `entry`: the
        inbox entry it answers, which reached this replica through `arrive` or a pull."""
        if entry is not None:
            self._submit(key, work, entry)
        else:
            self.owners.when_owned(key.storage_key, lambda: self._submit(key, work))

    def answer(self, key: SessionKey, entry: int, work: Work, finished: Callable[[], bool],
               seq: int | None = None) -> None:
        """`run` for the work an inbox entry asks for: the entry leaves the inbox once the work is over (unless
        `finished()` says the answer's own write took it), and stays for the chat's next owner when a halt
        cuts the work. `seq`: the entry's place in the chat's sequence, which the lane keeps."""
        async def job(session: Session) -> None:
            halted = False
            try:
                await work(session)
            except asyncio.CancelledError:
                halted = self._halting
                raise
            except NotOwner as e:  # fenced off: another replica owns the chat now and answers the entry
                halted = True
                log.warning("replica %s: run in %s abandoned: %s", self.owners.claims.replica, key.storage_key, e)
            finally:
                if not halted and not finished():
                    with contextlib.suppress(NotOwner):  # taken over meanwhile: the entry is the next owner's
                        await self._inbox.finish(key.storage_key, [entry])

        self._submit(key, job, entry, seq)

    def _submit(self, key: SessionKey, work: Work, entry: int | None = None, seq: int | None = None) -> None:
        claims = self.owners.claims

        async def job() -> None:
            if not claims.holds(key.storage_key):
                return  # the chat moved while this waited (this replica froze or was cut off): its owner runs it
            if claims.shared:  # what this work sends leaves only while the chat is still this replica's
                answering.set(lambda: claims.confirm(key.storage_key))
            await work(self._sessions.get(key))

        self._sessions.lane(key).submit(job, entry, seq)

    def aside(self, key: SessionKey, name: str, work: Callable[[], Awaitable[None]]) -> bool:
        """Run `work` for the chat beside its lane (a background task's run; the module docstring says how), under
        `name`, unique while it runs; False when one of that name is running already (routed twice)."""
        if name in self._aside:
            return False
        claims, lane = self.owners.claims, Lane(name)
        self._aside[name] = (key.storage_key, lane)

        async def job() -> None:
            try:
                if not claims.holds(key.storage_key):
                    return  # the chat moved while this waited: its owner runs it
                if claims.shared:
                    answering.set(lambda: claims.confirm(key.storage_key))
                await work()
            except NotOwner as e:  # fenced off: the chat's new owner runs it
                log.warning("replica %s: %s abandoned: %s", claims.replica, name, e)
            finally:
                if self._aside.get(name, (None, None))[1] is lane:
                    del self._aside[name]

        lane.submit(job)
        return True

    async def cancel_aside(self, name: str) -> bool:
        """Cut the work running aside under `name` and wait until it has wound down; False if none runs here."""
        found = self._aside.get(name)
        if found is None:
            return False
        running, _ = await found[1].interrupt()
        return running

    def _aside_of(self, storage_key: str) -> bool:
        """Something of the chat runs aside: its partition stays here."""
        return any(chat == storage_key for chat, _ in self._aside.values())

    def queued(self, key: SessionKey) -> int:
        return self._sessions.lane(key).queued

    def busy(self, key: SessionKey) -> bool:
        """The chat's lane is running or holds work."""
        return self._sessions.busy_at(key.storage_key)

    def forget(self, storage_key: str) -> None:
        """Drop an idle chat's cached session: while another replica owns the chat, it may change it."""
        self._sessions.forget(storage_key)

    async def interrupt(self, key: SessionKey) -> tuple[bool, int]:
        """/stop: cancel the chat's running work and drop what waits (dropped entries leave the inbox
        unanswered); returns (was_running, dropped) once the cut run has wound down."""
        lane = self._sessions.lane(key)
        stopped = await lane.interrupt()
        await self._inbox.finish(key.storage_key, lane.take_dropped())
        return stopped

    async def answered(self, key: SessionKey) -> None:
        """Returns once everything queued for this chat so far is done."""
        await self._sessions.lane(key).join()

    async def idle(self) -> None:
        """Wait until every chat's lane is empty (e.g. piped console input fully answered)."""
        while busy := self._busy():
            for lane in busy:
                await lane.join()

    async def settled(self, prefix: str, grace: float) -> None:
        """Wait, at most `grace` seconds, until the chats whose storage key starts with `prefix` are idle: a bot
        account being stopped lets its answers finish first."""
        busy = [lane for lane in self._busy() if lane.name.startswith(prefix)]
        if busy:
            await asyncio.wait([asyncio.ensure_future(lane.join()) for lane in busy], timeout=grace)

    def active(self) -> list[Lane]:
        """Lanes running or holding work (background tasks' among them), for the dashboard's overview."""
        return [lane for lane in self._lanes() if lane.busy or lane.queued]

    async def halt(self) -> None:
        """This replica lost its claims: stop every run now (their entries stay in the inbox for the chat's
        next owner) and forget the cached sessions."""
        self._halting = True
        try:
            await self._cut(self._busy())
        finally:
            self._halting = self._stopping
        self._sessions.forget_all()

    async def shutdown(self, grace: float) -> None:
        """Let runs finish for `grace` seconds, then cut what is left (answered after the restart)."""
        busy = self._busy()
        if not busy:
            return
        await asyncio.wait([asyncio.ensure_future(lane.join()) for lane in busy], timeout=grace)
        self._halting = self._stopping = True
        await self._cut(busy)  # a cut run keeps its partial answer, marked interrupted

    async def _cut(self, lanes: list[Lane]) -> None:
        for lane in lanes:
            lane.stop()
            lane.take_dropped()
        for lane in lanes:
            await lane.join()

    def _lanes(self) -> list[Lane]:
        return [*self._sessions.lanes(), *(lane for _, lane in list(self._aside.values()))]

    def _busy(self) -> list[Lane]:
        return [lane for lane in self._lanes() if lane.busy]

    async def stop_taking(self) -> None:
        """Shutdown, first step: no more entries from wake-ups or sweeps."""
        await self.owners.stop_taking()

    async def stop(self) -> None:
        """Shutdown, last step: give every chat up."""
        await self.owners.stop()
