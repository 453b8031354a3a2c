"""Claiming: each due time fires once, across two processes on one SQLite file and across restarts."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.messages import ChatRef
from bot.scheduler.recurrence import next_cron, next_interval
from bot.scheduler.runner import Claim, Scheduler
from bot.store import Job, NewJob
from bot.store.jobs import JobKind
from bot.store.sqlite import SqliteStore
from tests.scheduler.conftest import FakeClock

T0 = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]


def new_job(chat: str, kind: JobKind, spec: str, due: datetime, text: str = "x") -> NewJob:
    return NewJob(chat, None, "u1", kind, spec, "UTC", due, text, runs_agent=False,
                  where=ChatRef("test", chat.split(":")[1]), created_by_name="User")


async def open_store(path: Path) -> SqliteStore:
    store = SqliteStore(path)
    await store.open()
    return store


def test_cron_keeps_the_wall_clock_across_dst() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    first = next_cron("0 9 * * *", berlin, T0)
    second = next_cron("0 9 * * *", berlin, first)
    assert [first.astimezone(berlin).isoformat(), second.astimezone(berlin).isoformat()] == [
        "2026-03-29T09:00:00+02:00", "2026-03-30T09:00:00+02:00"]
    assert (second - first) == timedelta(hours=24)
    # 02:30 happens twice on 2026-10-25: it fires once, then the next day
    fall = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)
    runs = [next_cron("30 2 * * *", berlin, fall)]
    runs.append(next_cron("30 2 * * *", berlin, runs[-1]))
    assert [r.astimezone(berlin).isoformat() for r in runs] == ["2026-10-25T02:30:00+02:00",
                                                                "2026-10-26T02:30:00+01:00"]
    new_york = ZoneInfo("America/New_York")
    assert next_cron("0 9 * * *", new_york, datetime(2026, 11, 1, 12, 0, tzinfo=UTC)).isoformat() == (
        "2026-11-01T14:00:00+00:00")  # 09:00 EST, the day New York falls back


def test_interval_skips_missed_points_instead_of_bursting() -> None:
    every = timedelta(minutes=30)
    assert next_interval(every, T0, T0) == T0 + every
    assert next_interval(every, T0, T0 + timedelta(hours=5, minutes=1)) == T0 + timedelta(hours=5, minutes=30)
    assert next_interval(every, T0 + every, T0) == T0 + every


async def test_restart_catch_up_rules(tmp_path: Path) -> None:
    """Down from T0 to T0+2h: a fresh one-off fires once, an old one is reported missed, recurring jobs run at
    most once and move past now."""
    store = await open_store(tmp_path / "db.sqlite3")
    added: dict[str, Job] = {}
    for name, kind, spec, due in [
        ("fresh", "once", "", T0 + timedelta(minutes=110)),  # 10 minutes late
        ("old", "once", "", T0 + timedelta(minutes=30)),  # 90 minutes late
        ("every30m", "interval", "1800", T0 + timedelta(minutes=30)),  # three points missed
        ("daily", "cron", "30 13 * * *", T0 + timedelta(minutes=90)),  # 30 minutes late
        ("future", "once", "", T0 + timedelta(hours=3)),
    ]:
        added[name] = await store.jobs.add(new_job(f"test:{name}", kind, spec, due, text=name))
    clock = FakeClock(T0 + timedelta(hours=2))
    claims: list[Claim] = []

    async def dispatch(claim: Claim) -> None:
        claims.append(claim)
        await store.jobs.finish(claim.job.id, clock.now(), "ok")

    scheduler = Scheduler(store.jobs, clock, dispatch, catch_up=3600)
    assert await scheduler.tick() == 4
    assert await scheduler.tick() == 0  # nothing fires twice
    seen = {c.job.text: c.missed for c in claims}
    assert seen == {"fresh": False, "old": True, "daily": False}  # the skipped recurring job is never dispatched
    assert sorted(e.id for e in await store.inbox.unfinished()) == sorted(c.entry for c in claims)
    states = {}
    for name in added:
        [stored] = await store.jobs.for_chat(f"test:{name}")
        states[name] = (stored.next_due, stored.last_result, stored.claimed_at)
    assert states == {
        "fresh": (None, "ok", None),
        "old": (None, "ok", None),
        "every30m": (T0 + timedelta(hours=2, minutes=30), "skipped (late)", None),
        "daily": (T0 + timedelta(days=1, minutes=90), "ok", None),
        "future": (T0 + timedelta(hours=3), None, None),
    }
    assert await store.jobs.next_due() == T0 + timedelta(hours=2, minutes=30)
    await store.close()


async def test_two_processes_fire_each_of_1000_due_jobs_once(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite3"
    store = await open_store(db)
    expected = []
    for i in range(1000):  # one-offs and recurring jobs, due at different past moments
        kind, spec = [("once", ""), ("interval", "600"), ("cron", "*/5 * * * *")][i % 3]
        due = T0 - timedelta(seconds=i)
        job = await store.jobs.add(new_job(f"test:chat{i % 50}", kind, spec, due))  # type: ignore[arg-type]
        expected.append(f"{job.id}@{due.isoformat()}")
    await store.close()
    go = tmp_path / "go"
    workers = [await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.scheduler.claim_worker", str(db), str(go), T0.isoformat(), cwd=ROOT,
        stdout=asyncio.subprocess.PIPE) for _ in range(2)]
    for worker in workers:
        assert worker.stdout is not None
        assert (await worker.stdout.readline()).strip() == b"ready"
    go.touch()  # both start claiming at the same moment
    fired: list[str] = []
    for worker in workers:
        out, _ = await worker.communicate()
        assert worker.returncode == 0
        fired += json.loads(out)
    assert Counter(fired) == Counter(expected)  # every due time exactly once, none twice
    store = await open_store(db)
    soonest = await store.jobs.next_due()
    assert soonest is not None and soonest > T0
    await store.close()
