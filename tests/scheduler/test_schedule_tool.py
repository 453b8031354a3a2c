"""The `schedule` tool as the model calls it: every refusal is a sentence the model can act on and creates no
job; an ISO time, a recurring schedule and the per-chat cap each do what the tool's description promises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.agent.tools.registry import ToolContext
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app
from tests.scheduler.conftest import FakeClock
from tests.scheduler.test_scheduled_turns import T0, live


async def results(fake: FakeOpenAI, rec: RecordingAdapter, app: Any, *calls: dict[str, Any]) -> list[str]:
    """One turn per call; the tool result the model got for each."""
    out = []
    for n, arguments in enumerate(calls):
        fake.script(ToolCalls([(f"c{n}", "schedule", json.dumps(arguments))]), Text("ok"))
        before = len(fake.requests)
        await rec.say(f"schedule {n}")
        await app.hub.idle()
        out.append(fake.requests[before + 1]["body"]["messages"][-1]["content"])
    return out


async def test_each_refusal_says_why_and_creates_nothing(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=FakeClock(T0)) as app:
        await rec.say("/tz Europe/Berlin")
        said = await results(fake, rec, app, {"text": "  ", "when": "in 1h"}, {"text": "x"},
                             {"text": "x", "when": "in 1h", "every": "30m"}, {"text": "x", "when": "someday"},
                             {"text": "x", "when": "2020-01-01T09:00"})
        assert await live(app) == []
    assert said[:3] == ["Error: give `text` and exactly one of `when` (one-off) or `every` (recurring)."] * 3
    assert said[3].startswith("Error: cannot read the time 'someday'.")
    assert said[4] == "Error: 2020-01-01 09:00 CET is in the past (now 2026-03-28 13:00 CET)."


async def test_an_iso_time_a_recurring_job_and_the_cap(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    config = {"scheduler": {"max_jobs_per_chat": 2}}
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=FakeClock(T0), config=config) as app:
        await rec.say("/tz Europe/Berlin")
        said = await results(fake, rec, app, {"text": "lunch", "when": "2026-03-29T12:30"},
                             {"text": "standup", "every": "weekday 9:00"},
                             {"text": "one more", "when": "2026-03-29T13:00+00:00"})
        jobs = await live(app)
    once, weekly = sorted(jobs, key=lambda j: j.kind == "cron")
    assert said[0] == (f"Scheduled job {once.id}: post at 2026-03-29 12:30 CEST (Europe/Berlin). "
                       "The user can see it with /jobs.")
    assert said[1].startswith(f"Scheduled job {weekly.id}: every ") and "first at 2026-03-30 09:00 CEST" in said[1]
    assert (weekly.runs_agent, once.runs_agent) == (True, False)  # a recurring job always runs as a prompt
    assert said[2] == "Error: this chat has too many scheduled jobs; the user can cancel some with /jobs."


async def test_without_a_chat_to_post_in_nothing_is_scheduled(tmp_path: Path, fake: FakeOpenAI) -> None:
    async with running_app(tmp_path, fake.base_url, clock=FakeClock(T0)) as app:
        tool = app.tools.get("schedule")
        assert tool is not None
        answer = await tool.func(ToolContext(chat="recording:c1", workdir=tmp_path), text="x", when="in 1h")
    assert answer == "Error: scheduling needs a chat to post in."
