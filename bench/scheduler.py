"""The cost of 10 000 scheduled jobs: database size, memory, one idle pass, a minute of idle CPU, claiming.

The scheduler keeps no job in memory: an idle pass is one indexed claim query and one MIN(next_due), so
its cost should not grow with the number of jobs. The idle minute runs the real loop on the real clock.
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psutil

from bench.common import Section, median, ms, run_standalone
from bot.messages import ChatRef
from bot.scheduler.clock import SystemClock
from bot.scheduler.runner import Claim, Scheduler
from bot.store import NewJob
from bot.store.sqlite import SqliteStore

JOBS = 10_000
CHATS = 1_000
IDLE_SECONDS = 60.0
PASSES = 30


def _job(i: int, first: datetime) -> NewJob:
    kind, spec = (("cron", "0 9 * * *"), ("interval", "1800"), ("once", ""))[i % 3]
    chat = f"bench:{i % CHATS}"
    return NewJob(chat, None, "u1", kind, spec, "Europe/Berlin", first + timedelta(seconds=i), f"job {i}",
                  runs_agent=i % 2 == 0, where=ChatRef("bench", str(i % CHATS)), created_by_name="User")


async def run() -> Section:
    section = Section(f"Scheduler: {JOBS:,} jobs over {CHATS:,} chats")
    proc = psutil.Process()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "jobs.sqlite3"
        store = SqliteStore(path)
        await store.open()
        future = datetime.now(UTC) + timedelta(hours=2)
        for i in range(JOBS):
            await store.jobs.add(_job(i, future))
        await store.close()
        section.add("database size with the jobs", f"{path.stat().st_size / 1024 / 1024:.1f} MiB")

        gc.collect()
        rss_before = proc.memory_info().rss
        store = SqliteStore(path)
        await store.open()
        fired = 0

        async def dispatch(claim: Claim) -> None:
            nonlocal fired
            fired += 1
            await store.jobs.finish(claim.job.id, datetime.now(UTC), "ok")

        scheduler = Scheduler(store.jobs, SystemClock(), dispatch, catch_up=3600, poll=30)
        passes = []
        for _ in range(PASSES):
            started = time.perf_counter()
            await scheduler.tick()
            await store.jobs.next_due()
            passes.append(time.perf_counter() - started)
        section.check("idle pass (claim query + next due), median", median(passes) * 1000, 5, "ms", fmt=".2f")

        cpu_before = time.process_time()  # every thread of the process: the loop, the database thread, checkpoints
        scheduler.start()
        await asyncio.sleep(IDLE_SECONDS)
        await scheduler.stop()
        used = time.process_time() - cpu_before
        section.check("process CPU per idle minute (real scheduler loop, poll 30 s)", used * 60 / IDLE_SECONDS * 1000,
                      100, "ms", fmt=".2f")
        section.add("RSS added by opening the store and idling the scheduler",
                    f"{(proc.memory_info().rss - rss_before) / 1024 / 1024:.1f} MiB")
        assert fired == 0, "nothing is due for two hours"

        started = time.perf_counter()
        claimed = await Scheduler(store.jobs, _Later(future + timedelta(seconds=JOBS)), dispatch,
                                  catch_up=3600).tick()
        took = time.perf_counter() - started
        section.add(f"claim + dispatch all {claimed:,} when due at once", f"{took:.2f} s ({ms(took / claimed)}/job)")
        await store.close()
    return section


class _Later:
    """A clock standing after every job's due time."""

    def __init__(self, now: datetime) -> None:
        self._now = now

    def now(self) -> datetime:
        return self._now

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


if __name__ == "__main__":
    run_standalone(run)
