"""Busy sessions: a bounded queue answered in order, and a deadline that always frees the lane."""

from __future__ import annotations

from pathlib import Path

from bot.chats.sessions import SessionKey
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.harness import RecordingAdapter, running_app, wait_for


async def test_queue_is_answered_in_order_and_capped(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config={"max_queue": 2}) as app:
        fake.script(Text("first answer", first_token_delay=0.5))
        for text in ("one", "two", "three", "four"):
            await rec.say(text)
        await app.hub.idle()
    shown = rec.texts()
    busy = "I'm still working on earlier messages here; please wait a moment and send it again."
    assert shown == [busy, "first answer", "two", "three"]
    assert [r["body"]["messages"][-1]["content"] for r in fake.requests] == ["one", "two", "three"]


async def test_run_past_its_deadline_keeps_partial_and_frees_the_lane(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    config = {"llm": {"run_deadline": 1.0}}
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        fake.script(Text("slow words " * 20, delay=0.2))
        await rec.say("take your time")
        await rec.say("next one")
        await wait_for(lambda: "next one" in rec.texts(), within=10)
        session = app.lanes.session(SessionKey("recording", "c1"))
        await wait_for(lambda: not app.lanes.busy(session.key), within=10)  # "next one" is stored last
        interrupted = [m for m in session.path if m.interrupted]
    assert len(interrupted) == 1 and interrupted[0].content.startswith("slow words")
    first = rec.texts()[0]
    assert first.startswith("slow words") and first.endswith("(interrupted)")
    assert not any("went wrong" in text for text in rec.texts())
    assert 'bothub_runs_total{outcome="deadline"} 1.0' in app.metrics.render().decode()
