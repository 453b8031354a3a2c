"""The whole app (store, agent, hub) with the real WeCom adapter on the long connection, the fake WeCom and the
fake LLM: single chats, group @mentions, streamed answers finished in WeCom's stream, commands typed and
pressed on template cards, media in, reconnects and a duplicated delivery."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.wecom import longconn
from bot.app import App
from tests.e2e.test_telegram_e2e import jpeg_bytes
from tests.fakes.openai_api import MODEL, FakeOpenAI, Text
from tests.fakes.wecom_rules import BOT_ID, SECRET
from tests.fakes.wecom_ws import FakeWeCom
from tests.harness import running_app, wait_for

DM, GROUP = "wangwu", "wrkE2eGroup"
CAP = 50_000  # media.max_bytes in these tests
_ids = itertools.count(1)


@pytest.fixture
async def wecom_fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeWeCom]:
    monkeypatch.setattr(longconn.LongConnection, "pause", staticmethod(lambda s: asyncio.sleep(min(s, 0.01))))
    server = FakeWeCom()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, wecom_fake: FakeWeCom) -> AsyncIterator[App]:
    config = {"server": {"port": 0}, "llm": {"vision_models": [MODEL]}, "media": {"max_bytes": CAP},
              "wecom": {"ws_url": wecom_fake.url}}
    env = {"WECOM_BOT_ID": BOT_ID, "WECOM_BOT_SECRET": SECRET}
    async with running_app(tmp_path, fake.base_url, ("wecom",), config=config, env=env) as running:
        yield running


def message(content: str = "", *, group: bool = False, msgid: str = "", msgtype: str = "text",
            **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"msgid": msgid or f"msg-{next(_ids)}", "aibotid": BOT_ID,
                            "chattype": "group" if group else "single", "from": {"userid": DM}, "msgtype": msgtype}
    if group:
        body["chatid"] = GROUP
    if msgtype == "text":
        body["text"] = {"content": content}
    return {**body, **extra}


def finished(server: FakeWeCom, chat: str) -> list[str]:
    return [i.text for i in server.items if i.chat == chat and not i.open]


async def answered(server: FakeWeCom, chat: str, needle: str) -> None:
    await wait_for(lambda: any(needle in text for text in finished(server, chat)))


async def test_a_single_chat_message_is_answered_in_a_finished_stream(
        app: App, wecom_fake: FakeWeCom, fake: FakeOpenAI) -> None:
    fake.script(Text("hello Wang"))
    rid = await wecom_fake.push_message(message("hi"))
    await answered(wecom_fake, DM, "hello Wang")
    frames = wecom_fake.calls_of("aibot_respond_msg")
    assert frames and all(f.req_id == rid and f.body["msgtype"] == "stream" for f in frames)
    assert frames[-1].body["stream"]["finish"] is True


async def test_a_group_mention_is_answered_into_the_group(app: App, wecom_fake: FakeWeCom, fake: FakeOpenAI) -> None:
    fake.script(Text("the plan is simple"))
    await wecom_fake.push_message(message("@助手 what is the plan?", group=True))
    await answered(wecom_fake, GROUP, "the plan is simple")
    prompt = json.dumps(fake.requests[0]["body"]["messages"], ensure_ascii=False)
    assert "what is the plan?" in prompt and "@助手" not in prompt


async def test_a_long_answer_streams_into_one_stream_until_finish(
        app: App, wecom_fake: FakeWeCom, fake: FakeOpenAI) -> None:
    words = " ".join(f"word{i}" for i in range(60))
    fake.script(Text(words, chunks=30, delay=0.05))  # written over 1.5 s
    await wecom_fake.push_message(message("tell me a story"))
    await answered(wecom_fake, DM, "word59")
    frames = wecom_fake.calls_of("aibot_respond_msg")
    assert len(frames) >= 2 and len({f.body["stream"]["id"] for f in frames}) == 1
    assert all(words.startswith(f.body["stream"]["content"].strip()) for f in frames)  # a growing text
    assert [f.body["stream"]["finish"] for f in frames][-1] is True and frames[0].body["stream"]["finish"] is False


async def test_a_duplicated_delivery_is_answered_once(app: App, wecom_fake: FakeWeCom, fake: FakeOpenAI) -> None:
    fake.script(Text("only once"))
    body = message("hi", msgid="msg-twice")
    rid = await wecom_fake.push_message(body)
    await wecom_fake.push_message(body, req_id=rid)  # WeCom pushed it again
    await answered(wecom_fake, DM, "only once")
    await asyncio.sleep(0.3)
    assert len(fake.requests) == 1 and len(finished(wecom_fake, DM)) == 1


async def test_after_a_drop_the_connection_comes_back_and_answers(
        app: App, wecom_fake: FakeWeCom, fake: FakeOpenAI) -> None:
    await wecom_fake.drop()
    await wait_for(lambda: wecom_fake.connects == 2 and wecom_fake.subscribed.is_set())
    fake.script(Text("still here"))
    await wecom_fake.push_message(message("are you there?"))
    await answered(wecom_fake, DM, "still here")


async def test_commands_as_text_and_as_card_buttons(app: App, wecom_fake: FakeWeCom, fake: FakeOpenAI) -> None:
    # [1] first, [2] its answer, [3] second, [4] its answer; /goto 2 typed, then [5] third, [6] its answer
    for n, question in enumerate(("first question", "second question")):
        fake.script(Text(f"answer {n}"))
        await wecom_fake.push_message(message(f"@助手 {question}", group=True))
        await answered(wecom_fake, GROUP, f"answer {n}")
    await wecom_fake.push_message(message("@助手 /goto 2", group=True))
    fake.script(Text("answer 2"))
    await wecom_fake.push_message(message("@助手 third question", group=True))
    await answered(wecom_fake, GROUP, "answer 2")
    assert "second question" not in json.dumps(fake.requests[-1]["body"]["messages"])

    await wecom_fake.push_message(message("@助手 /tree", group=True))
    cards = lambda: [c for c in wecom_fake.calls_of("aibot_respond_msg", "aibot_send_msg")  # noqa: E731
                     if c.body.get("msgtype") == "template_card"]
    await wait_for(lambda: any(b["key"] == "/goto 4" for c in cards()
                               for b in c.body["template_card"].get("button_list", [])))
    card = next(c.body["template_card"] for c in cards()
                if any(b["key"] == "/goto 4" for b in c.body["template_card"].get("button_list", [])))
    press = message(msgtype="event", group=True, event={"eventtype": "template_card_event", "template_card_event": {
        "card_type": "button_interaction", "event_key": "/goto 4", "task_id": card["task_id"]}})
    await wecom_fake.push_event(press, task_id=card["task_id"])
    await wait_for(lambda: wecom_fake.calls_of("aibot_respond_update_msg"))
    (update,) = wecom_fake.calls_of("aibot_respond_update_msg")
    assert update.errcode == 0 and update.body["template_card"]["task_id"] == card["task_id"]  # replaced in place
    fake.script(Text("answer 3"))
    await wecom_fake.push_message(message("@助手 fourth question", group=True))
    await answered(wecom_fake, GROUP, "answer 3")
    prompt = json.dumps(fake.requests[-1]["body"]["messages"])
    assert "second question" in prompt and "third question" not in prompt  # the branch the button chose


async def test_a_mixed_message_picture_reaches_the_vision_model(
        app: App, wecom_fake: FakeWeCom, fake: FakeOpenAI) -> None:
    fake.script(Text("a green rectangle"))
    url, key = wecom_fake.host_media(jpeg_bytes())
    items = [{"msgtype": "text", "text": {"content": "what is this?"}},
             {"msgtype": "image", "image": {"url": url, "aeskey": key}}]
    await wecom_fake.push_message(message(msgtype="mixed", mixed={"msg_item": items}))
    await answered(wecom_fake, DM, "a green rectangle")
    text, image = fake.requests[0]["body"]["messages"][-1]["content"]
    assert text["text"].startswith("what is this?")
    assert image["image_url"]["url"].startswith("data:image/jpeg;base64,")


async def test_voice_arrives_as_wecoms_recognised_text(app: App, wecom_fake: FakeWeCom, fake: FakeOpenAI) -> None:
    fake.script(Text("it is sunny"))
    await wecom_fake.push_message(message(msgtype="voice", voice={"content": "明天天气怎么样"}))
    await answered(wecom_fake, DM, "it is sunny")
    assert "明天天气怎么样" in json.dumps(fake.requests[0]["body"]["messages"], ensure_ascii=False)


async def test_a_file_over_the_cap_is_refused_politely(app: App, wecom_fake: FakeWeCom, fake: FakeOpenAI) -> None:
    url, key = wecom_fake.host_media(b"x" * (CAP + 1000))
    await wecom_fake.push_message(message(msgtype="file", file={"url": url, "aeskey": key, "filename": "big.bin"}))
    await wait_for(lambda: any("big.bin" in text or "50" in text for text in finished(wecom_fake, DM)))
    assert fake.requests == []
