"""The job commands' answers for what the main scenarios never meet, through the whole app: no jobs yet, a chat
at its job limit, buttons for at most BUTTON_JOBS jobs, a command without its id, the time zone asked for, the
heartbeat asked about, switched on twice and without its checklist; and a bot with scheduling turned off."""

from __future__ import annotations

from pathlib import Path

from bot.commands.schedule import BUTTON_JOBS
from bot.i18n import t
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app
from tests.scheduler.conftest import FakeClock
from tests.scheduler.test_scheduled_turns import T0, live


async def test_job_commands_for_what_the_scenarios_never_meet(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec, jobs = RecordingAdapter(), BUTTON_JOBS + 1
    config = {"scheduler": {"max_jobs_per_chat": jobs}}
    async with running_app(tmp_path, fake.base_url, config=config, adapters=(rec,), clock=FakeClock(T0)) as app:
        for command in ("/jobs", "/cancel", "/resume 999", "/tz", "/heartbeat", "/heartbeat sometimes"):
            await rec.say(command)
        await app.hub.idle()
        assert rec.texts() == [
            t("en", "jobs_empty"), "Usage: /cancel <id>", t("en", "job_not_found", id="999"),
            "Time zone here: UTC (local time 2026-03-28 12:00 UTC). Change it with /tz Area/City.",
            t("en", "heartbeat_status", state="off"), "Usage: /heartbeat [on|off]"]
        for n in range(jobs):
            await rec.say(f"/remind in {n + 1}h call number {n}")
        await rec.say("/remind in 2d one too many")
        await app.hub.idle()
        assert rec.texts()[-1] == t("en", "too_many_jobs", n=jobs)
        await rec.say("/jobs")
        await app.hub.idle()
        listing = rec.sent[-1][1]
        assert len(listing.text.splitlines()) == jobs and len(listing.buttons) == BUTTON_JOBS
        for job in await live(app):
            await rec.say(f"/cancel {job.id}")
        await rec.say("/heartbeat on")
        await rec.say("/heartbeat on")  # already on: still one heartbeat job
        await app.hub.idle()
        assert [j.heartbeat for j in await live(app)] == [True]
        assert rec.texts()[-1] == rec.texts()[-2] and rec.texts()[-1].startswith("💓 Heartbeat on: every ")
        await rec.say("/heartbeat off")
        (app.cfg.workspace_dir / "HEARTBEAT.md").unlink()
        await rec.say("/heartbeat on")
        await app.hub.idle()
        assert rec.texts()[-2:] == [t("en", "heartbeat_off"), t("en", "heartbeat_no_file")]
        assert await live(app) == []


async def test_a_bot_with_scheduling_off_says_so(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, config={"scheduler": {"enabled": False}}, adapters=(rec,)) as app:
        for command in ("/remind in 1h call Li", "/jobs", "/tz Europe/Berlin"):
            await rec.say(command)
        await app.hub.idle()
        assert rec.texts() == [t("en", "scheduler_off")] * 3
