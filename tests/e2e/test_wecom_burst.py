"""Forty conversations (single chats and groups) answered at once, every answer streamed, through the whole app:
WeCom limits what reaches each conversation (30 messages a minute, 1 000 an hour, replies and pushes together)
and counts a stream's refreshes as no new messages, so no bot-wide pace holds the first frames back; the fake
refuses nothing and its judge sees no breach, and every answer arrives whole in one stream."""

from __future__ import annotations

import asyncio
import statistics
import time

from bot.app import App
from tests.e2e.test_wecom_e2e import app, wecom_fake
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.fakes.wecom_rules import BOT_ID
from tests.fakes.wecom_ws import FakeWeCom
from tests.harness import wait_for

CHATS = [*(f"user-burst-{n:02d}" for n in range(30)), *(f"wrkBurst{n:02d}" for n in range(10))]
WORDS = " ".join(f"w{n}" for n in range(30))  # about 1 s of streaming each

__all__ = ["app", "wecom_fake"]


def asked(chat: str) -> dict[str, object]:
    group = chat.startswith("wrk")
    body: dict[str, object] = {"msgid": f"msg-{chat}", "aibotid": BOT_ID, "chattype": "group" if group else "single",
                               "from": {"userid": "user-asker" if group else chat}, "msgtype": "text",
                               "text": {"content": "@助手 go" if group else "go"}}
    if group:
        body["chatid"] = chat
    return body


async def test_forty_conversations_streamed_at_once_stay_within_wecoms_limits_and_all_arrive_whole(
        app: App, wecom_fake: FakeWeCom, fake: FakeOpenAI) -> None:
    fake.responder = lambda _body: Text(WORDS, delay=0.035)
    pushed = dict.fromkeys(CHATS, time.monotonic())
    rids = await asyncio.gather(*(wecom_fake.push_message(asked(chat)) for chat in CHATS))
    await wait_for(lambda: all([i.text for i in wecom_fake.items if i.chat == c and not i.open] == [WORDS]
                               for c in CHATS), within=30)
    assert wecom_fake.budget_breaches == [] and all(call.errcode == 0 for call in wecom_fake.calls)
    assert [item.chat for item in wecom_fake.items].count(CHATS[0]) == 1  # one stream per answer
    chat_of = dict(zip(rids, CHATS, strict=True))
    first: dict[str, float] = {}
    for call in wecom_fake.calls_of("aibot_respond_msg"):
        first.setdefault(chat_of[call.req_id], call.at)
    waits = sorted(first[c] - pushed[c] for c in CHATS)
    assert waits[-1] < 2.0  # a bot-wide pace (the old guess, 30 a second) held the last first frames 3 s back
    frames = len(wecom_fake.calls_of("aibot_respond_msg"))
    print(f"\nwecom burst: first frame p50 {statistics.median(waits) * 1000:.0f} ms, max {waits[-1] * 1000:.0f} ms;"
          f" {frames / len(CHATS):.2f} frames per answer")
