"""One scheduler process for the claiming test: waits for the go file, claims everything due, prints what fired.

Run as `python -m tests.scheduler.claim_worker DB GO_FILE NOW_ISO`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import datetime
from pathlib import Path

from bot.scheduler.runner import Claim, Scheduler
from bot.store.sqlite import SqliteStore


class FixedClock:
    def __init__(self, now: datetime) -> None:
        self._now = now

    def now(self) -> datetime:
        return self._now

    async def sleep(self, seconds: float) -> None:
        raise AssertionError("the worker never sleeps")


async def claim(db: str, now: datetime) -> None:
    store = SqliteStore(db)
    await store.open()
    fired: list[str] = []

    async def dispatch(claim: Claim) -> None:
        assert claim.job.next_due is not None
        if not claim.missed:
            fired.append(f"{claim.job.id}@{claim.job.next_due.isoformat()}")
        await store.jobs.finish(claim.job.id, now, "ok")

    scheduler = Scheduler(store.jobs, FixedClock(now), dispatch, catch_up=3600, batch=10)
    for _ in range(3):  # later passes must find nothing: every fired job's next due is stored
        await scheduler.tick()
    await store.close()
    print(json.dumps(fired), flush=True)


def main(db: str, go: Path, now: datetime) -> None:
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.005)
    asyncio.run(claim(db, now))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), datetime.fromisoformat(sys.argv[3]))
