"""Taking messages in when something is off, on the long connection and by callback: frames and events with
nothing to answer, an event WeCom repeats, a refused welcome, a hub that fails, set-up mistakes; and callback
replies that outgrow their stream."""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

import pytest

from adapters.wecom import WeComConfig
from adapters.wecom import adapter as wecom_adapter
from bot.adapter import SendFailed
from bot.config import ConfigError
from bot.messages import ChatRef, IncomingMessage
from bot.replies import Reply
from tests.adapters.contract.driver import Inbox, services
from tests.adapters.wecom.conftest import ENV, Make, text
from tests.adapters.wecom.test_callback import hooked  # noqa: F401  (the callback-mode fixture)
from tests.fakes import wecom_rules
from tests.fakes.wecom_callback import FakeWeComCallbacks
from tests.fakes.wecom_rules import STREAM_WINDOW
from tests.fakes.wecom_ws import FakeWeCom

Hooked = tuple[Any, Any, FakeWeComCallbacks]


def press(msgid: str, task_id: str = "task-1") -> dict[str, Any]:
    body = text(msgid, "")
    body.update(msgtype="event", event={"eventtype": "template_card_event", "template_card_event": {
        "card_type": "button_interaction", "event_key": "/tree", "task_id": task_id}})
    return body


async def test_frames_and_events_with_nothing_to_answer_are_skipped(make: Make, wecom: FakeWeCom) -> None:
    _, inbox, _ = await make()
    for odd in ({"cmd": "aibot_msg_callback", "headers": {"req_id": "r-1"}, "body": "not an object"},
                {"cmd": "aibot_msg_callback", "headers": {}, "body": text("m-no-rid", "hi")}):
        await wecom.send_raw(json.dumps(odd))
    await wecom.push_message(text("m-empty", "   "))  # nothing said
    await wecom.push_message(text("m-bare", "@助手 ", group="wrkGroup1"))  # a bare @mention
    await wecom.push_event({**press("ev-x"), "event": {"eventtype": ""}})  # no event kind
    await wecom.push_event({**press(""), "msgid": ""})  # an event without its id
    await wecom.push_message(text("m-real", "after the noise"))
    assert (await inbox.next()).text == "after the noise"  # type: ignore[union-attr]
    assert len(inbox.handed) == 1


async def test_a_press_wecom_repeats_reaches_the_hub_once(make: Make, wecom: FakeWeCom) -> None:
    _, inbox, _ = await make()
    await wecom.push_event(press("ev-press"), task_id="task-1")
    await wecom.push_event(press("ev-press"), task_id="task-1")  # the same event id again
    await wecom.push_message(text("m-after", "next"))
    await inbox.next()
    assert [m.text for m in await drained(inbox, 1)] == ["next"]
    assert [m.text for m in inbox.handed] == ["/tree", "next"]  # type: ignore[attr-defined]


async def drained(inbox: Any, count: int) -> list[IncomingMessage]:
    return [await inbox.next() for _ in range(count)]


async def test_a_refused_welcome_is_logged_and_the_connection_goes_on(
        make: Make, wecom: FakeWeCom, caplog: pytest.LogCaptureFixture) -> None:
    _, inbox, _ = await make()
    wecom.fail("aibot_respond_welcome_msg", wecom_rules.BAD_PARAM)
    enter = {"msgid": "ev-enter", "chattype": "single", "from": {"userid": "lisi"}, "msgtype": "event",
             "event": {"eventtype": "enter_chat"}}
    with caplog.at_level(logging.WARNING, "adapters.wecom.adapter"):
        await wecom.push_event(enter)
        await wecom.push_message(text("m-next", "still here"))
        assert (await inbox.next()).text == "still here"  # type: ignore[union-attr]
    assert "the welcome was refused" in caplog.text and str(wecom_rules.BAD_PARAM) in caplog.text


def test_a_long_connection_url_that_is_no_websocket_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"ws:// or wss:// URL, not 'https://openws\.work\.weixin\.qq\.com'"):
        wecom_adapter.create(WeComConfig(ws_url="https://openws.work.weixin.qq.com"), ENV, services([]))


async def test_wecom_out_of_reach_fails_the_start_and_nothing_can_be_sent(make: Make) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"ws://127.0.0.1:{s.getsockname()[1]}/ws"
    adapter = wecom_adapter.create(WeComConfig(ws_url=url), ENV, services([]))
    with pytest.raises(ConnectionError, match="not started"):
        await adapter.send(ChatRef("wecom", "lisi"), Reply("before the start"))
    with pytest.raises(ConnectionError, match="cannot open WeCom's long connection"):
        await adapter.start(Inbox())
    assert not adapter.connected()
    with pytest.raises(SendFailed, match="long connection is down"):
        await adapter.send(ChatRef("wecom", "lisi"), Reply("hello?"))


async def test_a_callback_not_kept_is_a_503_and_its_retry_taken(
        hooked: Hooked, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    _, inbox, side = hooked
    inbox.refuse()  # the hub could not store it (NotKept)
    with caplog.at_level(logging.ERROR, "adapters.wecom.callback"):
        assert (await side.post(text("m-fails", "hi")))[0] == 503  # WeCom tries again
    assert "handling a callback failed" in caplog.text
    assert (await side.post(text("m-fails", "hi")))[0] == 200  # the retry is taken, not dropped as seen
    assert [m.message_id for m in inbox.accepted] == ["m-fails"]


async def test_callbacks_with_nothing_to_answer_get_an_empty_answer(hooked: Hooked) -> None:  # noqa: F811
    _, inbox, side = hooked
    assert await side.post(text("m-cb-empty", "  ")) == (200, None)
    assert await side.post({**press("ev-cb-press", task_id="t-unknown"), "response_url": side.response_url()}) == (
        200, None)  # a press is taken in, but answered by its response_url, not here
    assert [m.text for m in inbox.handed] == ["/tree"]


async def test_a_callback_answer_longer_than_its_stream_goes_on_by_the_response_url(hooked: Hooked) -> None:  # noqa: F811
    adapter, inbox, side = hooked
    _, first = await side.post({**text("m-long", "tell me all"), "response_url": side.response_url()})
    message = await inbox.next()
    lines = [f"第{n}行：一个很长的回答。" for n in range(1500)]
    await adapter.send(message.chat, Reply("\n".join(lines)), final=True)
    assert first is not None
    streamed = await side.poll(first, "m-long")
    (rest,) = [post["markdown"]["content"] for _, post in side.posts]
    assert len(streamed.encode()) <= wecom_rules.STREAM_BYTES and streamed.startswith("第0行")
    assert rest.startswith("第") and not rest.startswith("第0行")


async def test_a_final_edit_after_the_stream_finished_goes_by_the_response_url_once(hooked: Hooked) -> None:  # noqa: F811
    adapter, inbox, side = hooked
    _, first = await side.post({**text("m-fin", "hi"), "response_url": side.response_url()})
    message = await inbox.next()
    ref = await adapter.send(message.chat, Reply("done"), final=True)
    await adapter.edit(ref, Reply("done"), final=True)  # what the stream shows already: nothing to send
    assert side.posts == []
    await adapter.edit(ref, Reply("done, and corrected"), final=True)
    assert [post["markdown"]["content"] for _, post in side.posts] == ["done, and corrected"]
    assert first is not None and await side.poll(first, "m-fin") == "done"


async def test_a_stream_past_its_window_is_closed_and_the_final_text_goes_by_the_response_url(
        hooked: Hooked) -> None:  # noqa: F811
    adapter, inbox, side = hooked
    now = [1000.0]
    adapter.callback.clock = lambda: now[0]
    _, first = await side.post({**text("m-slow", "hi"), "response_url": side.response_url()})
    message = await inbox.next()
    ref = await adapter.send(message.chat, Reply("thinking"), final=False)
    now[0] += STREAM_WINDOW  # WeCom stops polling a stream this old
    await adapter.edit(ref, Reply("the answer"), final=True)
    assert [post["markdown"]["content"] for _, post in side.posts] == ["the answer"]
    assert first is not None and await side.poll(first, "m-slow") == "thinking"  # finished as it stood
