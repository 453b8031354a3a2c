"""The scheduler task: claim what is due, hand each claim on, sleep until the next due time (or a wake-up).

Claims come from the store in batches; each batch is one transaction in which the next due times are
stored, so several processes or replicas may run this loop on one database and a due time still fires
once. A claimed job stays claimed until its run is finished, so a slow run never overlaps the next one;
claims left by a process that died mid-run are released at start. While idle the loop costs one indexed
query per `poll` seconds (another replica may have added a job); a job created here wakes it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot.scheduler.clock import Clock
from bot.scheduler.recurrence import Advance, plan
from bot.store.jobs import Job, JobStore

log = logging.getLogger("bothub.scheduler")

BATCH = 100


@dataclass(frozen=True, slots=True)
class Claim:
    job: Job  # as it was when due: `job.next_due` is the due time being handled
    advance: Advance


Dispatch = Callable[[Claim], Awaitable[None]]  # must end with `jobs.finish(job.id, …)`, however the run goes


class Scheduler:
    def __init__(self, jobs: JobStore, clock: Clock, dispatch: Dispatch, *, catch_up: float,
                 poll: float = 30.0, stale_claims: float = 3600.0, batch: int = BATCH,
                 wake: asyncio.Event | None = None) -> None:
        self.jobs = jobs
        self.clock = clock
        self.dispatch = dispatch
        self.catch_up = catch_up
        self.poll = poll
        self.stale_claims = stale_claims  # seconds: longer than any run may take
        self.batch = batch
        self._wake = wake or asyncio.Event()  # set by whoever adds or resumes a job
        self._task: asyncio.Task[None] | None = None

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
        """Claim and dispatch everything due now, batch by batch; returns how many jobs were claimed."""
        total = 0
        while True:
            now = self.clock.now()
            due = await self.jobs.claim_due(now, self.batch, self._next_due_at(now))
            for job in due:
                await self._hand_on(Claim(job, self.decide(job, now)), now)
            total += len(due)
            if len(due) < self.batch:
                return total

    def _next_due_at(self, now: datetime) -> Callable[[Job], datetime | None]:
        return lambda job: self.decide(job, now).next_due

    async def _hand_on(self, claim: Claim, now: datetime) -> None:
        if not claim.advance.fire and not claim.advance.missed:
            # a recurring time that passed while nobody was running: skipped, the next one is stored
            await self.jobs.finish(claim.job.id, now, "skipped (late)")
            return
        try:
            await self.dispatch(claim)
        except Exception:
            log.exception("dispatching job %s failed", claim.job.id)
            await self.jobs.finish(claim.job.id, now, "error")

    async def run(self) -> None:
        try:
            released = await self.jobs.release_claims(self.clock.now() - timedelta(seconds=self.stale_claims))
            if released:
                log.warning("released %d job claim(s) left by a run that never finished", released)
        except Exception:
            log.exception("could not release stale job claims")
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
