"""Scheduled runs that cannot happen as planned, through the whole app: a heartbeat whose checklist was deleted
asks nothing and says so in its result; a job due while its platform is not running here is recorded as such and
leaves the inbox; a queued run whose job was cancelled meanwhile does nothing after a restart."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from bot.app import App
from bot.scheduler.recurrence import Advance
from bot.scheduler.runner import run_event
from bot.store.jobs import Due
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.scheduler.conftest import FakeClock
from tests.scheduler.test_scheduled_turns import CHAT, T0, tick


async def last_result(app: App) -> str | None:
    """The chat's job's last result, once it has one (runs end in the background)."""
    for _ in range(250):
        jobs = await app.store.jobs.for_chat(CHAT)
        if jobs and jobs[0].last_result:
            return jobs[0].last_result
        await asyncio.sleep(0.02)
    return None


async def test_a_heartbeat_whose_checklist_was_deleted_asks_nothing(tmp_path: Path, fake: FakeOpenAI) -> None:
    clock, rec = FakeClock(T0), RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock,
                           config={"heartbeat": {"interval": 1800}}) as app:
        (app.cfg.workspace_dir / "HEARTBEAT.md").write_text("- Backups?\n", encoding="utf-8")
        await rec.say("/heartbeat on")
        await app.hub.idle()
        (app.cfg.workspace_dir / "HEARTBEAT.md").unlink()
        clock.advance(minutes=30)
        assert await last_result(app) == "no HEARTBEAT.md"
        await app.hub.idle()
        assert fake.requests == [] and len(rec.texts()) == 1  # only "heartbeat on"


async def test_a_job_due_while_its_platform_is_not_running_here_is_recorded_so(tmp_path: Path,
                                                                                fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=FakeClock(T0)) as app:
        await rec.say("/remind in 10m call Li")
        await app.hub.idle()
    async with running_app(tmp_path, fake.base_url, clock=FakeClock(T0 + timedelta(minutes=10))) as app:
        await tick(app)
        assert await last_result(app) == "platform not running"
        await wait_for(lambda: not app.lanes.active())
        assert await app.store.inbox.unfinished() == []
    assert "⏰ Reminder: call Li" not in rec.texts()


async def test_a_queued_run_whose_job_was_cancelled_does_nothing_after_a_restart(tmp_path: Path,
                                                                                  fake: FakeOpenAI) -> None:
    clock, rec = FakeClock(T0), RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock) as app:
        await rec.say("/remind in 10m call Li")
        await app.hub.idle()
        clock.advance(minutes=10)
        [queued] = await app.store.jobs.queue_due(clock.now(), 10, lambda job: Due(None, run_event(
            job, Advance(True, None))))  # queued, and the process dies before it runs (as in test_scheduled_turns)
        assert queued.entry is not None
        await app.store.jobs.delete(CHAT, queued.job.id)  # cancelled meanwhile
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock) as app:
        await wait_for(lambda: not app.lanes.active())
        await app.hub.idle()
        assert await app.store.inbox.unfinished() == []
        assert "⏰ Reminder: call Li" not in rec.texts() and await app.store.jobs.for_chat(CHAT) == []
