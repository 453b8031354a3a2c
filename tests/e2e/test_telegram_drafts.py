"""Streaming on Telegram through the whole app and the real PTB adapter: private chats by sendMessageDraft and one
sendMessage, groups by a send and edits; a refused draft falls back to edits; a stopped answer still arrives."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.app import App
from bot.i18n import t
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import running_app, wait_for

GROUP = -100777
BOB = {"id": 77, "is_bot": False, "first_name": "Bob"}
ANSWER = " ".join(f"word{n}" for n in range(40))


@pytest_asyncio.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, tg: FakeTelegram) -> AsyncIterator[App]:
    env = tg.env
    async with running_app(tmp_path, fake.base_url, ("telegram",), env=env) as running:
        yield running


def edits_in(tg: FakeTelegram, chat_id: int) -> list[dict[str, object]]:
    return [p for p in tg.calls_of("editMessageText") if p["chat_id"] == chat_id]


def sends_in(tg: FakeTelegram, chat_id: int) -> list[dict[str, object]]:
    return [p for p in tg.calls_of("sendMessage") if p["chat_id"] == chat_id]


async def test_drafts_are_paced_and_the_answer_is_one_message(app: App, tg: FakeTelegram, fake: FakeOpenAI) -> None:
    fake.script(Text(f"**{ANSWER}**", delay=0.03))
    tg.inject_message(42, "stream it")
    await wait_for(lambda: tg.bot_texts(42) == [ANSWER], within=15)
    [draft] = tg.drafts_in(42)
    assert draft.draft_id != 0 and len(draft.texts) >= 3
    assert all(ANSWER.startswith(text.strip("*")) for text in draft.texts)  # an unclosed ** shows as typed
    times = [c.at for c in tg.calls if c.method == "sendMessageDraft"]
    assert min(b - a for a, b in itertools.pairwise(times)) >= 0.25  # one draft per 0.3 s at most
    [sent] = sends_in(tg, 42)
    assert sent["parse_mode"] == "HTML" and "<b>" in str(sent["text"])  # rendered as every answer is
    assert edits_in(tg, 42) == []


async def test_a_group_streams_by_a_send_and_edits(app: App, tg: FakeTelegram, fake: FakeOpenAI) -> None:
    fake.script(Text(ANSWER, delay=0.1))
    tg.inject_message(GROUP, "@hub_test_bot stream it", from_user=BOB)
    await wait_for(lambda: tg.bot_texts(GROUP) == [ANSWER], within=15)
    assert not tg.calls_of("sendMessageDraft")
    assert len(sends_in(tg, GROUP)) == 1 and edits_in(tg, GROUP)


async def test_a_refused_draft_falls_back_to_edits_in_that_chat(app: App, tg: FakeTelegram, fake: FakeOpenAI) -> None:
    tg.fail("sendMessageDraft", 400, "Bad Request: TEXTDRAFT_PEER_INVALID", chat_id=42)
    for question in ("first", "second"):
        fake.script(Text(f"{question} {ANSWER}", delay=0.05))
        tg.inject_message(42, question)
        await wait_for(lambda q=question: tg.bot_texts(42)[-1:] == [f"{q} {ANSWER}"], within=15)  # type: ignore[misc]
    assert len(tg.calls_of("sendMessageDraft")) == 1  # refused once, never asked again in that chat
    assert len(sends_in(tg, 42)) == 2 and len(edits_in(tg, 42)) >= 2  # each answer a send, then edits
    fake.script(Text(ANSWER, delay=0.03))
    tg.inject_message(43, "and here?", from_user={**BOB, "id": 43})
    await wait_for(lambda: tg.bot_texts(43) == [ANSWER], within=15)
    assert tg.drafts_in(43) and edits_in(tg, 43) == []  # another private chat still drafts


async def test_a_bot_api_without_drafts_streams_by_edits_everywhere(
        app: App, tg: FakeTelegram, fake: FakeOpenAI) -> None:
    tg.fail("sendMessageDraft", 404, "Not Found")
    for chat_id in (42, 43):
        fake.script(Text(ANSWER, delay=0.05))
        tg.inject_message(chat_id, "stream it", from_user={**BOB, "id": chat_id})
        await wait_for(lambda c=chat_id: tg.bot_texts(c) == [ANSWER], within=15)  # type: ignore[misc]
    assert len(tg.calls_of("sendMessageDraft")) == 1 and edits_in(tg, 43)


async def test_a_stopped_draft_still_leaves_the_answer_so_far(app: App, tg: FakeTelegram, fake: FakeOpenAI) -> None:
    fake.script(Text(ANSWER, delay=0.15))
    tg.inject_message(42, "a slow one")
    await wait_for(lambda: any(len(d.texts) >= 2 for d in tg.drafts_in(42)), within=15)
    tg.inject_message(42, "/stop")
    note = t("en", "interrupted")
    await wait_for(lambda: any(text.endswith(note) for text in tg.bot_texts(42)), within=15)
    [cut] = [text for text in tg.bot_texts(42) if text.endswith(note)]
    [draft] = tg.drafts_in(42)
    assert cut.startswith(draft.texts[-1]) and draft.became is not None
    assert edits_in(tg, 42) == []
