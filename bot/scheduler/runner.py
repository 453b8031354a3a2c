"""The scheduler task: queue what is due in the inbox, hand each run on, sleep until the next due time (or a
wake-up).

Due jobs come from the store in batches; each batch is one transaction in which the next due times are
stored and every run is queued as an inbox entry of its chat, so several processes or replicas may run
this loop on one database and a due time still fires once. The entry is answered like a message: by the
chat's owner, or by the next one when that replica dies first (a restart, on one process). A job stays
claimed while its entry waits, so a slow run never overlaps the next one (a claim whose entry went without
its result recorded, after /stop or a crash, is let go within a minute). While idle the loop costs two indexed
queries per `poll` seconds (another replica may have added a job); a job created here wakes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from zoneinfo import ZoneInfo

from bot.scheduler.clock import Clock
from bot.scheduler.recurrence import Advance, plan
from bot.store.jobs import Due, Job, JobStore, Queued

log = logging.getLogger("bothub.scheduler")

BATCH = 100
RELEASE_EVERY = 60.0  # seconds between looks for claims whose run ended unrecorded (a /stop, a crash)


@dataclass(frozen=True, slots=True)
class Claim:
    job: Job  # as it was when due: `job.next_due` is the due time being handled
    missed: bool  # its time passed longer ago than catch-up allows: the chat is told instead
    entry: int  # the inbox entry that runs it


Dispatch = Callable[[Claim], Awaitable[None]]  # must end with `jobs.finish(job.id, …)`, however the run goes


def run_event(job: Job, advance: Advance) -> str:
    """A job's run as its inbox entry's event: the due time it handles, and whether it is only reported."""
    assert job.next_due is not None
    return json.dumps({"due": job.next_due.isoformat(), "missed": advance.missed})


def read_run(job: Job, event: str) -> tuple[Job, bool]:
    """The job as it was at the due time its entry handles, and whether that run is missed."""
    fields = json.loads(event)
    return replace(job, next_due=datetime.fromisoformat(fields["due"])), bool(fields["missed"])


class Scheduler:
    def __init__(self, jobs: JobStore, clock: Clock, dispatch: Dispatch, *, catch_up: float,
                 poll: float = 30.0, batch: int = BATCH,
                 wake: asyncio.Event | None = None) -> None:
        self.jobs = jobs
        self.clock = clock
        self.dispatch = dispatch
        self.catch_up = catch_up
        self.poll = poll
        self.batch = batch
        self._wake = wake or asyncio.Event()  # set by whoever adds or resumes a job
        self._task: asyncio.Task[None] | None = None
        self._release_at = 0.0  # monotonic: the first tick looks

    def decide(self, job: Job, now: datetime) -> Advance:
        """Pure, so the store can apply it inside the claim; a job whose spec cannot be read is finished."""
        try:
            assert job.next_due is not None
            return plan(job.kind, job.spec, ZoneInfo(job.timezone), job.next_due, now, self.catch_up)
        except Exception:
            log.exception("job %s (%s %r in %s) cannot be scheduled; marking it missed", job.id, job.kind,
                          job.spec, job.timezone)
            return Advance(False, None, missed=True)

    async def tick(self) -> int:
        """Queue and dispatch everything due now, batch by batch; returns how many jobs were due."""
        if time.monotonic() >= self._release_at:
            self._release_at = time.monotonic() + RELEASE_EVERY
            released = await self.jobs.release_claims()
            if released:
                log.warning("released %d job claim(s) whose run ended without recording its result", released)
        total = 0
        while True:
            now = self.clock.now()
            due = await self.jobs.queue_due(now, self.batch, partial(self._plan, now=now))
            for queued in due:
                await self._hand_on(queued, now)
            total += len(due)
            if len(due) < self.batch:
                return total

    def _plan(self, job: Job, now: datetime) -> Due:
        advance = self.decide(job, now)
        return Due(advance.next_due, run_event(job, advance) if advance.fire or advance.missed else None)

    async def _hand_on(self, queued: Queued, now: datetime) -> None:
        job, advance = queued.job, self.decide(queued.job, now)
        if not advance.fire and not advance.missed:
            # a recurring time that passed while nobody was running: skipped, the next one is stored
            await self.jobs.finish(job.id, now, "skipped (late)")
        elif queued.entry is None:
            log.warning("job %s: its run due at %s was queued already", job.id, job.next_due)
        else:  # should this fail, the entry waits in the inbox for the chat's next owner (or the next start)
            await self.dispatch(Claim(job, advance.missed, queued.entry))

    async def run(self) -> None:
        while True:
            self._wake.clear()  # before the tick: a wake-up during it is not lost
            delay = self.poll
            try:
                await self.tick()
                soonest = await self.jobs.next_due()
                if soonest is not None:
                    delay = min(delay, max((soonest - self.clock.now()).total_seconds(), 0.0))
            except Exception:
                log.exception("scheduler pass failed; trying again in %ss", delay)
            await self._sleep(delay)

    async def _sleep(self, seconds: float) -> None:
        waiters = [asyncio.ensure_future(self._wake.wait()), asyncio.ensure_future(self.clock.sleep(seconds))]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    def start(self) -> None:
        self._task = asyncio.create_task(self.run(), name="scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
