"""The hub end to end with the real store, agent loop and fake LLM, through an in-memory platform."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.chats.sessions import SessionKey
from tests.fakes.openai_api import Error, FakeOpenAI, Text
from tests.harness import RecordingAdapter, running_app, wait_for


async def test_dm_message_is_answered_and_stored(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("hello bot")
        await wait_for(lambda: rec.texts() == ["hello bot"])
        session = app.lanes.session(SessionKey("recording", "c1"))
        assert [m.role for m in session.path] == ["user", "assistant"]
    assert fake.requests[0]["body"]["messages"][-1] == {"role": "user", "content": "hello bot"}


async def test_group_needs_mention_and_names_the_sender(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("not for you", group=True, mentioned=False)
        await rec.say("for you", group=True, user="alice")
        await wait_for(lambda: len(rec.texts()) == 1)
        await app.hub.idle()
    assert len(fake.requests) == 1
    assert fake.requests[0]["body"]["messages"][-1]["content"] == "[User alice] for you"


async def test_redelivered_message_is_answered_once(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("once", message_id="m-1")
        await rec.say("once", message_id="m-1")
        await app.hub.idle()
    rec2 = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec2,)) as app:  # after a restart too
        await rec2.say("once", message_id="m-1")
        await app.hub.idle()
    assert len(fake.requests) == 1
    assert rec2.sent == []


async def test_two_chats_run_concurrently_one_chat_in_order(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        fake.hold = asyncio.Event()  # the model answers nobody until released
        await rec.say("first in a", chat_id="a")
        await rec.say("first in b", chat_id="b")
        await rec.say("second in a", chat_id="a")
        # b's run reached the model while a's is still waiting: lanes are concurrent (in turn, it never could)
        await wait_for(lambda: len(fake.requests) == 2)
        assert {r["body"]["messages"][-1]["content"] for r in fake.requests} == {"first in a", "first in b"}
        fake.hold.set()
        await rec.say("third in a", chat_id="a")
        await app.hub.idle()
    assert rec.texts("a") == ["first in a", "second in a", "third in a"]
    assert rec.texts("b") == ["first in b"]


async def test_llm_failure_is_polite_keeps_message_and_retry_branches(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        fake.script(Error(500, message="boom"))
        await rec.say("please answer")
        await wait_for(lambda: len(rec.texts()) == 1)
        failure = rec.texts()[0]
        assert "/retry" in failure and "error" in failure and "boom" not in failure
        await rec.say("/retry")
        await wait_for(lambda: len(rec.texts()) == 2)
        assert rec.texts()[1] == "please answer"
        session = app.lanes.session(SessionKey("recording", "c1"))
        assert [m.role for m in session.path] == ["user", "assistant"]
        tree = await app.conversations.tree(session, "")
        assert sum(1 for m in tree.messages.values() if m.role == "user") == 1


async def test_goto_then_message_branches(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        for text in ("one", "two", "/goto 2", "branch"):
            await rec.say(text)
        await app.hub.idle()
        await rec.say("/tree")
        await app.hub.idle()
    assert rec.texts()[-1].split("\n")[1:] == [
        "[1] You: one", "[2] AI: one", "├─ [3] You: two", "│  [4] AI: two", "└─ [5] You: branch",
        "   [6] AI: branch ← you are here"]


async def test_other_chats_conversation_is_not_found(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("secret of b", chat_id="b")
        await app.hub.idle()
        b_id = app.lanes.session(SessionKey("recording", "b")).conversation_id
        await rec.say(f"/switch {b_id}", chat_id="a")
        await rec.say("/switch 0badc0de", chat_id="a")
        await app.hub.idle()
    own, random = rec.texts("a")
    assert own == random.replace("0badc0de", str(b_id))
    assert "No conversation" in own


async def test_unknown_command_and_bad_arguments_get_usage(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        for text in ("/frobnicate", "/goto x", "/goto 99", "/lang fr", "/list 0"):
            await rec.say(text)
        await app.hub.idle()
    answers = rec.texts()
    assert answers[0].startswith("Unknown command /frobnicate")
    assert answers[1] == "Usage: /goto <N>"
    assert "no message [99]" in answers[2]
    assert answers[3] == "Usage: /lang en|zh"
    assert answers[4] == "Usage: /list [all] [page]"
    assert fake.requests == []


async def test_stop_cancels_run_keeps_partial_and_clears_queue(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        fake.script(Text("one two three four five six seven eight", delay=0.3))
        await rec.say("long answer please")
        await rec.say("queued")
        await wait_for(lambda: any("two" in t for t in rec.texts()))
        await rec.say("/stop")
        await app.hub.idle()
        session = app.lanes.session(SessionKey("recording", "c1"))
        last = session.path[-1]
        assert last.role == "assistant" and last.interrupted and last.content.startswith("one two")
    partial, stopped = rec.texts()
    assert partial == f"{last.content}\n\n(interrupted)" and stopped == "Stopped. 1 queued message(s) dropped."
    assert len(fake.requests) == 1


async def test_model_command_switches_this_chats_model_only(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    config = {"llm": {"allowed_models": ["fake-model", "small-model"]}}
    async with running_app(tmp_path, fake.base_url, config=config, adapters=(rec,)) as app:
        await rec.say("/model huge-model")
        await rec.say("/model small-model")
        await rec.say("hello")
        await rec.say("hello from b", chat_id="b")
        await app.hub.idle()
    refused, switched = rec.texts()[:2]
    assert "not allowed" in refused and "small-model" in switched
    models = {r["body"]["messages"][-1]["content"]: r["body"]["model"] for r in fake.requests}
    assert models == {"hello": "small-model", "hello from b": "fake-model"}


async def test_model_without_allowed_models_says_how_to_allow_others(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("/model")
        await rec.say("/model other-model")
        await app.hub.idle()
    shown, refused = rec.texts()
    assert shown == refused
    assert "fake-model, the only one configured" in shown and "llm.allowed_models" in shown
