"""Jobs through the whole app (real store, hub, lanes, fake LLM), with an injected clock instead of sleeping."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.adapter import ChatUnavailable
from bot.app import App
from bot.chats.sessions import SessionKey
from bot.messages import ChatRef, SentRef
from bot.replies import Reply
from bot.scheduler.recurrence import Advance
from bot.scheduler.runner import run_event
from bot.store import Job
from bot.store.jobs import Due
from tests.fakes.openai_api import Error, FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.scheduler.conftest import FakeClock

T0 = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)  # 13:00 in Berlin, the day before DST starts
CHAT = "recording:c1"


def path_of(app: App, chat_id: str = "c1") -> list[tuple[str, str, bool]]:
    session = app.lanes.session(SessionKey("recording", chat_id))
    return [(m.role, m.content, m.job_id is not None) for m in session.path]


async def live(app: App, chat: str = CHAT) -> list[Job]:
    assert app.schedules is not None
    return await app.schedules.jobs(chat)


async def tick(app: App) -> int:
    assert app.scheduler is not None
    return await app.scheduler.tick()


async def test_remind_posts_once_at_its_time_as_a_marked_turn(tmp_path: Path, fake: FakeOpenAI) -> None:
    clock, rec = FakeClock(T0), RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock) as app:
        await rec.say("/tz Europe/Berlin")
        await rec.say("/remind in 10m call Li")
        await wait_for(lambda: len(rec.texts()) == 2)
        job = (await live(app))[0]
        assert rec.texts()[1] == f"⏰ Reminder `{job.id}` set for 2026-03-28 13:10 CET."
        assert rec.sent[-1][1].buttons == ((rec.sent[-1][1].buttons[0][0],),)
        assert rec.sent[-1][1].buttons[0][0].action == f"/cancel {job.id}"
        clock.advance(minutes=9, seconds=59)
        assert await tick(app) == 0
        clock.advance(seconds=1)
        await wait_for(lambda: "⏰ Reminder: call Li" in rec.texts())
        await app.hub.idle()
        assert path_of(app) == [("user", "[scheduled reminder] call Li", True),
                                ("assistant", "⏰ Reminder: call Li", True)]
        await rec.say("/tree")
        await app.hub.idle()
        assert "[1] You: ⏰ [scheduled reminder] call Li" in rec.texts()[-1]  # /tree marks scheduled turns
        clock.advance(hours=5)
        assert await tick(app) == 0
        await app.hub.idle()
        assert rec.texts().count("⏰ Reminder: call Li") == 1
        assert await live(app) == []  # a fired one-off leaves /jobs
    assert fake.requests == []  # a plain reminder never asks the model


async def test_jobs_lists_with_pause_resume_and_cancel_buttons(tmp_path: Path, fake: FakeOpenAI) -> None:
    clock, rec = FakeClock(T0), RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock) as app:
        await rec.say("/lang zh")
        await rec.say("/every 每天 9点 总结新闻")
        await rec.say("/remind 明天 9点 开会")
        await app.hub.idle()
        daily, meeting = sorted(await live(app), key=lambda j: j.kind)
        assert (daily.kind, daily.spec, daily.runs_agent, meeting.runs_agent) == ("cron", "0 9 * * *", True, False)
        await rec.say("/jobs")
        await app.hub.idle()
        listing = rec.sent[-1][1]
        assert listing.title == "定时任务（UTC）"
        lines = {daily.id: f"`{daily.id}` ▶ · 每 0 9 * * * · 下次 2026-03-29 09:00 UTC · 总结新闻",
                 meeting.id: f"`{meeting.id}` ▶ · 一次 · 下次 2026-03-29 09:00 UTC · 开会"}
        in_order = sorted(lines)  # same due time: by id
        assert listing.text.splitlines() == [lines[i] for i in in_order]
        assert [[b.action for b in row] for row in listing.buttons] == [[f"/pause {i}", f"/cancel {i}"]
                                                                         for i in in_order]
        await rec.say(f"/pause {daily.id}")
        await rec.say("/jobs")
        await app.hub.idle()
        assert f"/resume {daily.id}" in [b.action for row in rec.sent[-1][1].buttons for b in row]
        clock.advance(days=1)
        assert await tick(app) == 1  # the meeting; the paused job stays put
        await rec.say(f"/resume {daily.id}")
        await rec.say(f"/cancel {daily.id}", chat_id="c2")  # another chat cannot see or cancel it
        await app.hub.idle()
        assert rec.texts("c2") == [f"No job '{daily.id}' in this chat — see /jobs."]
        [resumed] = await live(app)
        assert (resumed.id, resumed.enabled, resumed.next_due) == (daily.id, True, T0 + timedelta(days=1, hours=21))
        await rec.say(f"/cancel {daily.id}")
        await app.hub.idle()
        assert rec.texts()[-1] == f"任务 `{daily.id}` 已取消。"
        assert await live(app) == []


async def test_bad_times_get_usage_help_and_unknown_zones_are_refused(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=FakeClock(T0)) as app:
        await rec.say("/remind next week call Li")
        await rec.say("/every 10s spam")
        await rec.say("/tz Mars/Olympus")
        await rec.say("/tz ../../etc/passwd")
        await rec.say("/remind 2026-01-01 10:00 too late")
        await app.hub.idle()
        texts = rec.texts()
        assert texts[0].startswith("Usage: /remind <when> <text>") and texts[1].startswith("Usage: /every")
        assert texts[2] == "'Mars/Olympus' is not a time zone I know. Use an IANA name such as Europe/Berlin or " \
                           "Asia/Shanghai."
        assert texts[3].startswith("'../../etc/passwd' is not a time zone")
        assert texts[4] == "2026-01-01 10:00 UTC has already passed."
        assert await live(app) == []


async def test_a_due_job_waits_in_the_lane_behind_a_running_answer(tmp_path: Path, fake: FakeOpenAI) -> None:
    clock, rec = FakeClock(T0), RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock) as app:
        await rec.say("/remind in 1m stretch")
        await app.hub.idle()
        fake.script(Text("one two three four five", delay=0.1))
        await rec.say("hello")
        await wait_for(lambda: len(fake.requests) == 1)  # the answer is streaming
        clock.advance(minutes=1)
        await wait_for(lambda: app.lanes.queued(SessionKey("recording", "c1")) == 1)  # claimed, queued behind it
        assert "⏰ Reminder: stretch" not in rec.texts()
        await app.hub.idle()
        assert path_of(app) == [("user", "hello", False), ("assistant", "one two three four five", False),
                                ("user", "[scheduled reminder] stretch", True),
                                ("assistant", "⏰ Reminder: stretch", True)]
        assert rec.texts()[-2:] == ["one two three four five", "⏰ Reminder: stretch"]


async def test_heartbeat_ok_is_not_sent_and_leaves_the_conversation_as_it_was(tmp_path: Path,
                                                                            fake: FakeOpenAI) -> None:
    clock, rec = FakeClock(T0), RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock,
                           config={"heartbeat": {"interval": 1800}}) as app:
        (app.cfg.workspace_dir / "HEARTBEAT.md").write_text("- Is the backup older than a day?\n", encoding="utf-8")
        await rec.say("/heartbeat on")
        await app.hub.idle()
        assert rec.texts() == ["💓 Heartbeat on: every 30m I go through HEARTBEAT.md and speak only if something "
                               "needs you."]
        fake.script(Text("HEARTBEAT_OK"))
        clock.advance(minutes=30)
        await wait_for(lambda: len(fake.requests) == 1)
        await app.hub.idle()
        assert "Is the backup older than a day?" in fake.requests[0]["body"]["messages"][-1]["content"]
        assert len(rec.texts()) == 1 and rec.typings == []  # nothing shown, not even "typing…"
        assert path_of(app) == []  # the silent turn is a side branch; the cursor is back where it was
        job = (await live(app))[0]
        assert (job.last_result, job.next_due) == ("ok (silent)", T0 + timedelta(hours=1))
        fake.script(Text("The backup is 3 days old."))
        clock.advance(minutes=30)
        await wait_for(lambda: rec.texts()[-1] == "The backup is 3 days old.")
        await app.hub.idle()
        assert [role for role, _, scheduled in path_of(app) if scheduled] == ["user", "assistant"]
        fake.script(Error(500, message="provider down"))
        clock.advance(minutes=30)
        await wait_for(lambda: len(fake.requests) == 3)
        await app.hub.idle()
        assert rec.texts()[-1] == "The backup is 3 days old."  # a failed heartbeat stays quiet too
        assert (await live(app))[0].last_result == "failed"
        await rec.say("/heartbeat off")
        await app.hub.idle()
        assert await live(app) == []


async def test_schedule_tool_through_the_model(tmp_path: Path, fake: FakeOpenAI) -> None:
    clock, rec = FakeClock(T0), RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock) as app:
        await rec.say("/tz Europe/Berlin")
        fake.script(ToolCalls([("call_1", "schedule", json.dumps({"text": "call Li", "when": "tomorrow 9:00"}))]),
                    Text("Done: tomorrow at 9:00 I'll remind you to call Li."))
        await rec.say("remind me tomorrow at 9 to call Li")
        await app.hub.idle()
        [job] = await live(app)
        assert (job.kind, job.runs_agent, job.text, job.timezone, job.created_by) == (
            "once", False, "call Li", "Europe/Berlin", "u1")
        assert job.next_due == datetime(2026, 3, 29, 7, 0, tzinfo=UTC)  # 09:00 CEST
        tool_result = fake.requests[1]["body"]["messages"][-1]
        assert tool_result == {"role": "tool", "tool_call_id": "call_1", "content":
                               f"Scheduled job {job.id}: post at 2026-03-29 09:00 CEST (Europe/Berlin). "
                               "The user can see it with /jobs."}
        assert rec.texts()[-1] == "Done: tomorrow at 9:00 I'll remind you to call Li."
        clock.advance(hours=19)
        await wait_for(lambda: rec.texts()[-1] == "⏰ Reminder: call Li")


async def test_schedule_tool_obeys_group_commands(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    config = {"telegram": {"access": {"group_commands": "admins", "admins": ["boss"]}}}
    rec.name = "telegram"
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=FakeClock(T0), config=config) as app:
        fake.script(ToolCalls([("c1", "schedule", json.dumps({"text": "x", "when": "in 1h"}))]), Text("ok"))
        await rec.say("remind us in an hour", group=True, user="member")
        await rec.say("/remind in 1h x", group=True, user="member")
        await app.hub.idle()
        assert fake.requests[1]["body"]["messages"][-1]["content"].startswith("Error: in this group only admins")
        assert "Only admins can do that here." in rec.texts()  # /remind, answered at once
        assert await live(app, "telegram:c1") == []


class BlockingAdapter(RecordingAdapter):
    """A platform where the bot was blocked once `blocked` is set."""

    blocked = False

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        if self.blocked:
            raise ChatUnavailable("Forbidden: bot was blocked by the user")
        return await super().send(chat, reply, final=final)


async def test_a_chat_that_blocked_the_bot_gets_its_jobs_paused(tmp_path: Path, fake: FakeOpenAI) -> None:
    clock, rec = FakeClock(T0), BlockingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock) as app:
        await rec.say("/remind in 10m first")
        await rec.say("/every 1h check the news")
        await app.hub.idle()
        rec.blocked = True
        clock.advance(minutes=10)
        for _ in range(500):
            jobs = await live(app)
            if [j.enabled for j in jobs] == [False]:
                break
            await app.hub.idle()
        assert [(j.text, j.enabled) for j in jobs] == [("check the news", False)]
        clock.advance(hours=3)
        assert await tick(app) == 0  # paused, not retried
    assert fake.requests == []


async def test_a_reminder_missed_while_down_is_reported_once(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=FakeClock(T0)) as app:
        await rec.say("/remind in 10m call Li")
        await rec.say("/remind in 150m water plants")
        await app.hub.idle()
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=FakeClock(T0 + timedelta(hours=3))) as app:
        await wait_for(lambda: len(rec.texts()) == 2)
        await app.hub.idle()
        missed, late = sorted(rec.texts())
        assert late == "⏰ Reminder: water plants"  # 30 minutes late: still within catch_up
        assert missed.startswith("⏰ I was offline when this was due (2026-03-28 12:10 UTC), so it comes late: "
                                 "call Li")
        assert await tick(app) == 0


async def test_a_run_queued_before_the_process_died_is_sent_after_the_restart_once(tmp_path: Path,
                                                                                   fake: FakeOpenAI) -> None:
    clock, rec = FakeClock(T0), RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock) as app:
        await rec.say("/remind in 10m call Li")
        await wait_for(lambda: len(rec.texts()) == 1)
        clock.advance(minutes=10)
        # what the scheduler's transaction leaves when the process dies right after it: a queued run, not sent
        [queued] = await app.store.jobs.queue_due(clock.now(), 10, lambda job: Due(None, run_event(
            job, Advance(True, None))))
        assert queued.entry is not None and "⏰ Reminder: call Li" not in rec.texts()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock) as app:
        await wait_for(lambda: "⏰ Reminder: call Li" in rec.texts())
        await app.hub.idle()
        assert await tick(app) == 0
        assert rec.texts().count("⏰ Reminder: call Li") == 1
        [job] = await app.store.jobs.for_chat(CHAT)
        assert (job.last_result, job.claimed_at, job.next_due) == ("sent", None, None)
        assert await app.store.inbox.unfinished() == []
