"""LLM trouble: SDK retries before the stream, context-too-long retried once shorter, one notice per outage."""

from __future__ import annotations

from pathlib import Path

from bot.app import App
from tests.fakes.openai_api import Error, FakeOpenAI, Text
from tests.harness import RecordingAdapter, make_config, running_app

CONTEXT_ERROR = Error(400, code="context_length_exceeded",
                      message="This model's maximum context length is 8192 tokens.")


async def test_sdk_retries_429_and_5xx_before_the_stream(tmp_path: Path, fake: FakeOpenAI) -> None:
    cfg, env = make_config(tmp_path, fake.base_url)
    cfg.llm.max_retries = 2  # running_app turns retries off; this test is about them
    rec = RecordingAdapter()
    app = App(cfg, env, adapters=(rec,))
    await app.start()
    try:
        fake.script(Error(429, retry_after=0.05), Error(503), Text("made it"))
        await rec.say("hello")
        await app.hub.idle()
    finally:
        await app.stop()
    assert rec.texts() == ["made it"]
    assert len(fake.requests) == 3


async def test_context_too_long_is_retried_once_with_less_history(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    config = {"llm": {"context_tokens": 12000}}  # fits by our estimate (no compaction); the provider disagrees
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        for n in range(6):
            await rec.say(f"note {n} " + "lorem ipsum dolor " * 100)
        await app.hub.idle()
        sent_before = len(fake.requests)
        fake.script(CONTEXT_ERROR, Text("short answer"))
        await rec.say("and now?")
        await app.hub.idle()
        fake.script(CONTEXT_ERROR, CONTEXT_ERROR)
        await rec.say("still too long?")
        await app.hub.idle()
    first_try, retry = fake.requests[sent_before:sent_before + 2]
    assert len(retry["body"]["messages"]) < len(first_try["body"]["messages"])
    assert retry["body"]["messages"][-1]["content"] == "and now?"
    assert rec.texts()[6] == "short answer"
    assert len(fake.requests) == sent_before + 4  # the second failure is not retried forever
    assert "conversation too long" in rec.texts()[-1]


async def test_provider_down_gives_one_notice_per_chat(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        fake.script(*[Error(500, message="down")] * 6)
        for text in ("a", "b", "c"):
            await rec.say(text, chat_id="x")
            await rec.say(text, chat_id="y")
        await app.hub.idle()
    for chat in ("x", "y"):
        [notice] = rec.texts(chat)
        assert "model provider failed" in notice and "down" not in notice
    assert len(fake.requests) == 6  # every message was tried and is stored for /retry
