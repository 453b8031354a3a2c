"""The whole app (store, agent, hub) with the real Feishu adapter, the fake open platform and the fake LLM."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.app import App
from bot.chats.sessions import SessionKey
from tests.fakes.feishu_api import (
    APP_ID,
    APP_SECRET,
    BOT_OPEN_ID,
    FakeFeishu,
)
from tests.fakes.feishu_events import card_action_event, signed_request
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.harness import running_app, wait_for

ENCRYPT_KEY, VERIFICATION_TOKEN = "e2e-encrypt-key", "e2e-verification-token"
GROUP = "oc_e2e_group"
AT_BOT = (("@_user_1", BOT_OPEN_ID, "Hub"),)


@pytest.fixture
async def feishu_fake() -> AsyncIterator[FakeFeishu]:
    server = FakeFeishu()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, feishu_fake: FakeFeishu) -> AsyncIterator[App]:
    config = {"server": {"port": 0}, "feishu": {"transport": "webhook"}}
    async with running_app(tmp_path, fake.base_url, ("feishu",), config=config, env=feishu_env(feishu_fake)) as running:
        yield running


def feishu_env(server: FakeFeishu) -> dict[str, str]:
    return {"FEISHU_APP_ID": APP_ID, "FEISHU_APP_SECRET": APP_SECRET, "FEISHU_DOMAIN": server.domain,
            "FEISHU_ENCRYPT_KEY": ENCRYPT_KEY, "FEISHU_VERIFICATION_TOKEN": VERIFICATION_TOKEN}


async def push(app: App, event: dict[str, Any]) -> dict[str, Any]:
    """POST an event to the hub's webhook the way Feishu does (encrypted, signed); return the answer."""
    body, headers = signed_request(ENCRYPT_KEY, event)
    url = f"http://127.0.0.1:{app.web_port}/feishu/webhook"
    async with aiohttp.ClientSession() as session, session.post(url, data=body, headers=headers) as resp:
        assert resp.status == 200
        return dict(await resp.json())


async def mention(app: App, server: FakeFeishu, event_id: str, text: str) -> dict[str, Any]:
    event = server.incoming(event_id, text=f"@_user_1 {text}", chat_id=GROUP, mentions=AT_BOT,
                            token=VERIFICATION_TOKEN)
    await push(app, event)
    return event


async def answered(server: FakeFeishu, needle: str) -> None:
    await wait_for(lambda: any(needle in text for text in server.shown(GROUP)))


def last_prompt(llm: FakeOpenAI) -> str:
    return "\n".join(str(m.get("content")) for m in llm.requests[-1]["body"]["messages"] if m["role"] != "system")


def answer_calls(server: FakeFeishu) -> list[tuple[str, str]]:
    """(method, route) of each call that sends or changes a message or card, ids made generic."""
    return [(c.method, re.sub(r"/(om_[a-z_-]+\d*|7355\d+)", "/id", c.path.removeprefix("/open-apis/")))
            for c in server.calls if c.method != "GET" and ("im/v1/messages" in c.path or "cardkit" in c.path)]


async def test_a_long_answer_streams_in_a_streaming_card(app: App, feishu_fake: FakeFeishu, fake: FakeOpenAI) -> None:
    words = " ".join(f"word{i}" for i in range(80))
    fake.script(Text(words, chunks=40, delay=0.05))  # written over 2 s
    await mention(app, feishu_fake, "ev-stream", "tell me a story")
    await answered(feishu_fake, "word79")
    (entity,) = feishu_fake.cards.values()
    assert entity.history and all(words.startswith(text.strip()) for text in entity.history)  # growing text
    sequences = [c.body["sequence"] for c in feishu_fake.requests(path_part="/cardkit/v1/cards/")
                 if "id_convert" not in c.path]
    assert sequences == sorted(set(sequences))
    assert not entity.streaming  # the final edit showed the whole answer and closed the stream at once
    (answer,) = [m for m in feishu_fake.messages.values() if not m.get("from_user")]
    assert answer["reply_to"] == "om_in_ev-stream"  # the answer quotes the question in the group
    calls = answer_calls(feishu_fake)
    convert = calls.index(("POST", "cardkit/v1/cards/id_convert"))
    assert calls[0] == ("POST", "im/v1/messages/id/reply")  # shown at once
    assert set(calls[1:convert]) <= {("PATCH", "im/v1/messages/id")}  # edits within STREAM_AFTER of the send
    assert calls[convert + 1] == ("PUT", "cardkit/v1/cards/id")  # a streaming card once it ran long
    assert ("PUT", "cardkit/v1/cards/id/elements/answer/content") in calls[convert:]
    assert calls[-1] == ("PUT", "cardkit/v1/cards/id") and calls.count(calls[convert]) == 1


async def test_a_short_answer_costs_its_card_and_one_final_patch(
        app: App, feishu_fake: FakeFeishu, fake: FakeOpenAI) -> None:
    fake.script(Text("a short answer written in six pieces", chunks=6, delay=0.05))  # past the first-send grace
    await mention(app, feishu_fake, "ev-short", "quick one")
    await answered(feishu_fake, "a short answer written in six pieces")
    await asyncio.sleep(0.5)  # room for a stray call to show
    assert answer_calls(feishu_fake) == [("POST", "im/v1/messages/id/reply"), ("PATCH", "im/v1/messages/id")]
    assert feishu_fake.cards == {}


async def test_an_answer_complete_within_the_first_send_grace_costs_one_call(
        app: App, feishu_fake: FakeFeishu) -> None:
    await mention(app, feishu_fake, "ev-quick", "quick question")  # the fake model answers at once
    await answered(feishu_fake, "quick question")
    await asyncio.sleep(0.5)
    assert answer_calls(feishu_fake) == [("POST", "im/v1/messages/id/reply")]


async def test_card_button_moves_the_cursor_and_the_next_answer_branches(
        app: App, feishu_fake: FakeFeishu, fake: FakeOpenAI) -> None:
    # [1] first, [2] its answer, [3] second, [4] its answer; /goto 2, then [5] third, [6] its answer
    for n, question in enumerate(("first question", "second question")):
        await mention(app, feishu_fake, f"ev-q{n}", question)
        await answered(feishu_fake, question)
    await mention(app, feishu_fake, "ev-goto", "/goto 2")
    await mention(app, feishu_fake, "ev-q3", "third question")
    await answered(feishu_fake, "third question")
    assert "second question" not in last_prompt(fake)

    await mention(app, feishu_fake, "ev-tree", "/tree")
    await wait_for(lambda: any('"/goto 4"' in m["content"] for m in feishu_fake.messages.values()))
    tree_id = next(mid for mid, m in feishu_fake.messages.items() if '"/goto 4"' in m["content"])
    before = feishu_fake.messages[tree_id]["content"]
    answer = await push(app, card_action_event("ev-press", "/goto 4", card_message_id=tree_id, chat_id=GROUP,
                                               token=VERIFICATION_TOKEN))
    assert "/goto 4" in answer["toast"]["content"]
    await wait_for(lambda: feishu_fake.messages[tree_id]["content"] != before)  # the card, updated in place
    assert "second question" in feishu_fake.shown(GROUP)[-1]

    await mention(app, feishu_fake, "ev-q4", "fourth question")
    await answered(feishu_fake, "fourth question")
    prompt = last_prompt(fake)
    assert "first question" in prompt and "second question" in prompt
    assert "third question" not in prompt  # continued on the other branch, chosen with the button


async def test_redelivered_event_is_answered_once(app: App, feishu_fake: FakeFeishu, fake: FakeOpenAI) -> None:
    event = await mention(app, feishu_fake, "ev-once", "only once, please")
    await push(app, event)  # Feishu redelivers with the same event_id
    await answered(feishu_fake, "only once, please")
    await mention(app, feishu_fake, "ev-marker", "marker")  # everything before it is handled once it is answered
    await answered(feishu_fake, "marker")
    assert len(fake.requests) == 2
    assert len(feishu_fake.shown(GROUP)) == 2


async def test_card_buttons_archive_then_list_all_and_switch_back(
        app: App, feishu_fake: FakeFeishu, fake: FakeOpenAI) -> None:
    await mention(app, feishu_fake, "ev-h1", "notes on the quarterly report")
    await answered(feishu_fake, "notes on the quarterly report")
    report = app.lanes.session(SessionKey("feishu", GROUP)).conversation_id
    await mention(app, feishu_fake, "ev-h2", "/new")
    await mention(app, feishu_fake, "ev-h3", f"/switch {report}")
    await wait_for(lambda: any(f'"/archive {report}"' in m["content"] for m in feishu_fake.messages.values()))
    card_id = next(mid for mid, m in feishu_fake.messages.items() if f'"/archive {report}"' in m["content"])
    assert f'"/delete {report}"' in feishu_fake.messages[card_id]["content"]  # both buttons on the card
    await push(app, card_action_event("ev-h4", f"/archive {report}", card_message_id=card_id, chat_id=GROUP,
                                      token=VERIFICATION_TOKEN))
    await wait_for(lambda: "Archived conversation" in feishu_fake.messages[card_id]["content"])
    assert f'"/unarchive {report}"' in feishu_fake.messages[card_id]["content"]  # the card, updated in place
    await mention(app, feishu_fake, "ev-h5", "/list")
    await wait_for(lambda: any('"/list all"' in m["content"] for m in feishu_fake.messages.values()))
    await mention(app, feishu_fake, "ev-h6", "/list all")
    await answered(feishu_fake, "📦 archived")
    list_id, listing = list(feishu_fake.messages.items())[-1]
    assert "📦 archived" in listing["content"] and f'"/switch {report}"' in listing["content"]
    await push(app, card_action_event("ev-h7", f"/switch {report}", card_message_id=list_id, chat_id=GROUP,
                                      token=VERIFICATION_TOKEN))
    await wait_for(lambda: "It was archived" in feishu_fake.messages[list_id]["content"])
    assert app.lanes.session(SessionKey("feishu", GROUP)).conversation_id == report
