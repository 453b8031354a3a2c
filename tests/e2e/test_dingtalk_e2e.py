"""The whole app (store, agent, hub) with the real DingTalk adapter in Stream mode (the dingtalk-stream SDK over
a WebSocket), the fake gateway and OpenAPI, and the fake LLM."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.dingtalk import stream
from bot.app import App
from tests.fakes.dingtalk_api import CLIENT_ID, CLIENT_SECRET, FakeDingTalk
from tests.fakes.dingtalk_gateway import CARD_TOPIC, ROBOT_TOPIC
from tests.fakes.openai_api import MODEL, FakeOpenAI, Text
from tests.harness import running_app, wait_for

DM, GROUP = "staff-ann", "cid-e2e-group"
_ids = itertools.count(1)


@pytest.fixture
async def dingtalk_fake() -> AsyncIterator[FakeDingTalk]:
    server = FakeDingTalk()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, dingtalk_fake: FakeDingTalk,
              monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[App]:
    monkeypatch.setattr(stream.StreamConnection, "pause", staticmethod(lambda _s: asyncio.sleep(0.01)))
    config = {"server": {"port": 0}, "llm": {"vision_models": [MODEL]},
              "dingtalk": {"api_base": dingtalk_fake.base, "oapi_base": dingtalk_fake.base}}
    env = {"DINGTALK_CLIENT_ID": CLIENT_ID, "DINGTALK_CLIENT_SECRET": CLIENT_SECRET}
    async with running_app(tmp_path, fake.base_url, ("dingtalk",), config=config, env=env) as running:
        yield running


def robot(text: str = "", *, group: bool = False, msg_id: str = "", msgtype: str = "text",
          content: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "msgId": msg_id or f"msg-{next(_ids)}", "conversationType": "2" if group else "1",
        "conversationId": GROUP if group else "cid-dm", "senderStaffId": DM, "senderId": "$:sender-ann",
        "senderNick": "Ann", "createAt": 1764518400000, "isInAtList": True, "msgtype": msgtype}
    if msgtype == "text":
        data["text"] = {"content": text}
    else:
        data["content"] = content or {}
    return data


async def say(server: FakeDingTalk, data: dict[str, Any]) -> str:
    frame_id = await server.push(ROBOT_TOPIC, server.robot_frame(data))
    await server.until_acked(frame_id)
    return frame_id


async def answered(server: FakeDingTalk, chat: str, needle: str) -> None:
    await wait_for(lambda: any(needle in text for text in server.shown(chat)))


def finished(server: FakeDingTalk, chat: str) -> list[str]:
    return [c.params["msgContent"] for c in server.cards.values()
            if c.chat_id == chat and c.params.get("flowStatus") == "3"]


async def test_a_one_to_one_message_is_answered_in_a_finished_ai_card(
        app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    fake.script(Text("hello Ann"))
    await say(dingtalk_fake, robot("hi"))
    await wait_for(lambda: "hello Ann" in finished(dingtalk_fake, DM))
    (create,) = dingtalk_fake.calls_to("createAndDeliver")
    assert create.body["openSpaceId"] == f"dtv1.card//IM_ROBOT.{DM}"
    opened = dingtalk_fake.opens[0]
    assert {s["topic"] for s in opened["subscriptions"]} == {ROBOT_TOPIC, CARD_TOPIC}


async def test_a_group_mention_is_answered_into_the_group(
        app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    fake.script(Text("the plan is simple"))
    await say(dingtalk_fake, robot(" what is the plan?", group=True))
    await wait_for(lambda: "the plan is simple" in finished(dingtalk_fake, GROUP))
    assert dingtalk_fake.calls_to("createAndDeliver")[0].body["openSpaceId"] == f"dtv1.card//IM_GROUP.{GROUP}"
    assert "what is the plan?" in json.dumps(fake.requests[0]["body"]["messages"])


async def test_a_long_answer_streams_into_its_card(app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    words = " ".join(f"word{i}" for i in range(60))
    fake.script(Text(words, chunks=30, delay=0.05))  # written over 1.5 s
    await say(dingtalk_fake, robot("tell me a story"))
    await wait_for(lambda: any("word59" in text for text in finished(dingtalk_fake, DM)))
    streamed = [c.body["content"] for c in dingtalk_fake.calls_to("/card/streaming")]
    assert streamed and all(words.startswith(text.strip()) for text in streamed)  # a growing text
    assert len(dingtalk_fake.calls_to("createAndDeliver")) == 1  # one card, edited in place


async def test_a_duplicated_delivery_is_answered_once(
        app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    fake.script(Text("only once"))
    message = robot("hi", msg_id="msg-twice")
    await say(dingtalk_fake, message)
    await say(dingtalk_fake, message)  # DingTalk pushed it again (a new frame, the same msgId)
    await wait_for(lambda: "only once" in finished(dingtalk_fake, DM))
    await asyncio.sleep(0.3)
    assert len(fake.requests) == 1 and len(dingtalk_fake.calls_to("createAndDeliver")) == 1


async def test_after_a_drop_and_a_disconnect_frame_the_stream_reconnects(
        app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    await dingtalk_fake.drop()
    await wait_for(lambda: dingtalk_fake.ws_connects == 2)
    await dingtalk_fake.ask_disconnect()
    await wait_for(lambda: dingtalk_fake.ws_connects == 3)
    assert dingtalk_fake.acks[-1]["code"] == 200  # the disconnect frame was acknowledged first
    fake.script(Text("still here"))
    await say(dingtalk_fake, robot("are you there?"))
    await wait_for(lambda: "still here" in finished(dingtalk_fake, DM))
    ping = await dingtalk_fake.ping()
    ack = await dingtalk_fake.until_acked(ping)
    assert json.loads(ack["data"]) == json.loads(dingtalk_fake.pushed[ping].frame["data"])  # the opaque echoed


async def test_commands_as_text_and_as_card_buttons(app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    # [1] first, [2] its answer, [3] second, [4] its answer; /goto 2 typed, then [5] third, [6] its answer
    for n, question in enumerate(("first question", "second question")):
        fake.script(Text(f"answer {n}"))
        await say(dingtalk_fake, robot(question, group=True))
        await wait_for(lambda n=n: f"answer {n}" in finished(dingtalk_fake, GROUP))
    await say(dingtalk_fake, robot(" /goto 2", group=True))
    fake.script(Text("answer 2"))
    await say(dingtalk_fake, robot("third question", group=True))
    await wait_for(lambda: "answer 2" in finished(dingtalk_fake, GROUP))
    assert "second question" not in json.dumps(fake.requests[-1]["body"]["messages"])

    await say(dingtalk_fake, robot(" /tree", group=True))
    await wait_for(lambda: any("/goto 4" in c.params.get("sys_full_json_obj", "")
                               for c in dingtalk_fake.cards.values()))
    track, card = next((t, c) for t, c in dingtalk_fake.cards.items() if "/goto 4" in c.params["sys_full_json_obj"])
    before = card.params["msgContent"]
    buttons = json.loads(card.params["sys_full_json_obj"])["msgButtons"]
    assert all(b["request"] for b in buttons)  # callback buttons whose id is the command
    press = {"outTrackId": track, "userId": DM, "spaceType": "IM_GROUP", "spaceId": GROUP,
             "content": json.dumps({"cardPrivateData": {"actionIds": ["/goto 4"], "params": {}}})}
    await dingtalk_fake.until_acked(await dingtalk_fake.push(CARD_TOPIC, press))
    await wait_for(lambda: card.params["msgContent"] != before)  # the pressed card, replaced in place
    fake.script(Text("answer 3"))
    await say(dingtalk_fake, robot("fourth question", group=True))
    await wait_for(lambda: "answer 3" in finished(dingtalk_fake, GROUP))
    prompt = json.dumps(fake.requests[-1]["body"]["messages"])
    assert "second question" in prompt and "third question" not in prompt  # the branch the button chose
