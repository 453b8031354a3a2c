"""Automatic titles: asked of the cheap model after the first answer is delivered, never holding it up;
written once, never over a /rename, and a failure leaves the first-message title."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot.agent.titles import clean_title
from bot.app import App
from bot.chats.sessions import SessionKey
from tests.fakes.openai_api import Error, FakeOpenAI, Text
from tests.harness import RecordingAdapter, running_app, wait_for

TITLES = {"llm": {"auto_titles": True, "skill_model": "cheap-model"}}


def _is_title_request(body: dict[str, Any]) -> bool:
    return body["model"] == "cheap-model"


async def _title(app: App, chat: str = "recording:c1") -> str:
    conv_id = app.lanes.session(SessionKey("recording", chat.split(":")[1])).conversation_id
    info = await app.store.conversations.get(chat, conv_id or "")
    assert info is not None
    return info.title


async def test_the_answer_is_delivered_while_the_title_request_is_held(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    fake.hold, fake.hold_only = asyncio.Event(), _is_title_request
    fake.script(Text("Rome in May is warm; book the early train."), Text("Rome trip in May"))
    async with running_app(tmp_path, fake.base_url, config=TITLES, adapters=(rec,)) as app:
        await rec.say("I want to go to Rome in May, what should I know?")
        await app.hub.idle()  # the lane is free: the answer did not wait for the title
        assert rec.texts() == ["Rome in May is warm; book the early train."]
        await wait_for(lambda: len(fake.requests) == 2)
        answer, title = (r["body"] for r in fake.requests)
        assert answer["model"] == "fake-model" and title["model"] == "cheap-model"
        assert "I want to go to Rome in May" in title["messages"][1]["content"]
        assert "book the early train" in title["messages"][1]["content"]
        assert await _title(app) == "I want to go to Rome in May, what should I know?"  # the fallback, for now
        fake.hold.set()
        for _ in range(200):
            if await _title(app) == "Rome trip in May":
                break
            await asyncio.sleep(0.02)
        assert await _title(app) == "Rome trip in May"
        await rec.say("and in June?")  # not the first exchange: no new title request
        await app.hub.idle()
        assert [r["body"]["model"] for r in fake.requests] == ["fake-model", "cheap-model", "fake-model"]
        assert rec.texts() == ["Rome in May is warm; book the early train.", "and in June?"]
        await rec.say("/list")
        await app.hub.idle()
        assert rec.texts()[-1].startswith(f"▶ `{app.lanes.session(SessionKey('recording', 'c1')).conversation_id}"
                                          "` Rome trip in May · 4 msgs")


async def test_a_failed_title_leaves_the_first_message_and_a_rename_wins(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    fake.script(Text("hi there"), Error(500))
    async with running_app(tmp_path, fake.base_url, config=TITLES, adapters=(rec,)) as app:
        await rec.say("hello bot")
        await wait_for(lambda: len(fake.requests) == 2)
        assert app.titler is not None
        await wait_for(lambda: app.titler is not None and app.titler.pending == 0)
        assert await _title(app) == "hello bot"
        fake.hold, fake.hold_only = asyncio.Event(), _is_title_request
        fake.script(Text("hello"), Text("A generated title"))
        await rec.say("/new")
        await rec.say("second conversation")
        await wait_for(lambda: len(fake.requests) == 4)
        await rec.say("/rename My own name")
        await app.hub.idle()
        fake.hold.set()
        await wait_for(lambda: app.titler is not None and app.titler.pending == 0)
        assert await _title(app) == "My own name"


@pytest.mark.parametrize(("said", "title"), [
    ("Rome trip in May", "Rome trip in May"),
    ('"Rome trip in May."\nHope this helps!', "Rome trip in May"),
    ("Title: 东京天气。", "东京天气"),
    ("**Planning a trip**", "Planning a trip"),
    ("", ""),
    ("x" * 61, ""),
])
def test_clean_title(said: str, title: str) -> None:
    assert clean_title(said) == title
