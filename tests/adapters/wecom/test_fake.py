"""The fake WeCom is strict: it must refuse what WeCom refuses, or the adapter's tests prove nothing. Driven
here by a raw WebSocket client, not the adapter."""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.adapters.wecom.conftest import text
from tests.fakes import wecom_rules as rules
from tests.fakes.wecom_ws import FakeWeCom

_ids = itertools.count(1)


class Client:
    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws

    async def call(self, cmd: str, body: dict[str, Any] | None = None, rid: str = "") -> dict[str, Any]:
        rid = rid or f"{cmd}-{next(_ids)}"
        await self.ws.send_json({"cmd": cmd, "headers": {"req_id": rid}, "body": body or {}})
        while True:
            frame: dict[str, Any] = await self.ws.receive_json(timeout=5)
            if "cmd" not in frame and frame["headers"]["req_id"] == rid:
                return frame


@pytest.fixture
async def client(wecom: FakeWeCom) -> AsyncIterator[Client]:
    async with aiohttp.ClientSession() as http, http.ws_connect(wecom.url) as ws:
        c = Client(ws)
        assert (await c.call("aibot_subscribe", {"bot_id": rules.BOT_ID, "secret": rules.SECRET}))["errcode"] == 0
        yield c


def stream(sid: str, content: str, finish: bool = False) -> dict[str, Any]:
    return {"msgtype": "stream", "stream": {"id": sid, "finish": finish, "content": content}}


async def test_a_frame_before_subscribing_closes_the_socket(wecom: FakeWeCom) -> None:
    async with aiohttp.ClientSession() as http, http.ws_connect(wecom.url) as ws:
        await ws.send_json({"cmd": "ping", "headers": {"req_id": "p"}})
        assert (await ws.receive()).type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)


async def test_replies_need_a_callbacks_req_id_and_a_finished_stream_stays_finished(
        wecom: FakeWeCom, client: Client) -> None:
    assert (await client.call("aibot_respond_msg", stream("s1", "hi"), "no-such-req"))["errcode"] == \
        rules.INVALID_REQ_ID
    rid = await wecom.push_message(text("m-1", "hi"))
    assert (await client.call("aibot_respond_msg", stream("s1", "he", finish=True), rid))["errcode"] == 0
    assert (await client.call("aibot_respond_msg", stream("s1", "hello"), rid))["errcode"] == rules.STREAM_EXPIRED
    assert (await client.call("aibot_respond_msg", stream("s2", "字" * 7000), rid))["errcode"] == rules.BAD_PARAM
    assert wecom.shown("lisi") == ["he"]


async def test_a_stream_past_its_window_is_dropped(wecom: FakeWeCom, client: Client,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rid = await wecom.push_message(text("m-2", "hi"))
    assert (await client.call("aibot_respond_msg", stream("s3", "thinking"), rid))["errcode"] == 0
    later = time.monotonic() + rules.STREAM_WINDOW + 1
    monkeypatch.setattr(time, "monotonic", lambda: later)
    assert not wecom.stream_open("s3")
    assert (await client.call("aibot_respond_msg", stream("s3", "done", True), rid))["errcode"] == rules.STREAM_EXPIRED


async def test_cards_are_checked_and_pushes_reach_only_known_chats(wecom: FakeWeCom, client: Client) -> None:
    rid = await wecom.push_message(text("m-3", "hi"))
    buttons = [{"text": f"b{n}", "style": 1, "key": f"/goto {n}"} for n in range(7)]
    card = {"card_type": "button_interaction", "task_id": "t1", "main_title": {"title": "pick"},
            "button_list": buttons}
    answer = await client.call("aibot_respond_msg", {"msgtype": "template_card", "template_card": card}, rid)
    assert answer["errcode"] == rules.BAD_PARAM  # seven buttons
    notice = {"card_type": "text_notice", "task_id": "t2", "main_title": {"title": "done"}}
    assert (await client.call("aibot_respond_msg", {"msgtype": "template_card", "template_card": notice},
                              rid))["errcode"] == rules.BAD_PARAM  # a text notice needs its link
    push = {"chatid": "stranger", "chat_type": 1, "msgtype": "markdown", "markdown": {"content": "hi"}}
    assert (await client.call("aibot_send_msg", push))["errcode"] == rules.NO_PRIVILEGE


async def test_a_welcome_comes_within_five_seconds_once(wecom: FakeWeCom, client: Client) -> None:
    event = {"msgid": "ev-1", "chattype": "single", "from": {"userid": "lisi"}, "msgtype": "event",
             "event": {"eventtype": "enter_chat"}}
    rid = await wecom.push_event(event)
    welcome = {"msgtype": "text", "text": {"content": "你好"}}
    wecom.callbacks[rid].at -= rules.EVENT_WINDOW + 1
    assert (await client.call("aibot_respond_welcome_msg", welcome, rid))["errcode"] == rules.INVALID_REQ_ID
    rid = await wecom.push_event({**event, "msgid": "ev-2"})
    assert (await client.call("aibot_respond_welcome_msg", welcome, rid))["errcode"] == 0
    assert (await client.call("aibot_respond_welcome_msg", welcome, rid))["errcode"] == rules.INVALID_REQ_ID


async def test_more_than_thirty_messages_a_minute_into_a_chat_are_refused_and_judged(
        wecom: FakeWeCom, client: Client) -> None:
    rid = await wecom.push_message(text("m-4", "hi"))
    codes = [(await client.call("aibot_respond_msg", stream(f"b{n}", "x", True), rid))["errcode"] for n in range(31)]
    assert codes[:30] == [0] * 30 and codes[30] == rules.RATE_LIMITED
    assert [b.rule for b in wecom.budget_breaches] == ["per conversation in 60 s"]
    wecom.budget_allowance = "this test goes over the budget on purpose"


async def test_refreshing_a_stream_is_no_new_message(wecom: FakeWeCom, client: Client) -> None:
    """WeCom counts messages into a conversation; a refresh with the same stream.id updates one of them."""
    rid = await wecom.push_message(text("m-5", "hi"))
    codes = [(await client.call("aibot_respond_msg", stream("s1", f"x{n}", n == 39), rid))["errcode"]
             for n in range(40)]
    assert codes == [0] * 40 and wecom.shown("lisi") == ["x39"] and not wecom.budget_breaches
