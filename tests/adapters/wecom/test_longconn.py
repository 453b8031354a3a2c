"""The long connection: subscription (refused credentials fail the start), heartbeats, redeliveries dropped by
msgid, a drop reconnected, a displacing connection answered without a fight, the welcome on entering a chat."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from adapters.wecom import longconn
from bot.config import ConfigError
from bot.messages import IncomingMessage
from tests.adapters.wecom.conftest import Make, text
from tests.fakes.wecom_rules import BOT_ID, SECRET
from tests.fakes.wecom_ws import FakeWeCom


async def test_it_subscribes_with_bot_id_and_secret_and_hands_over_a_message(make: Make, wecom: FakeWeCom) -> None:
    adapter, inbox, _ = await make()
    assert adapter.connected()
    (subscribe,) = wecom.calls_of("aibot_subscribe")
    assert subscribe.body == {"bot_id": BOT_ID, "secret": SECRET} and subscribe.errcode == 0
    await wecom.push_message(text("m-1", "你好"))
    message = await inbox.next()
    assert isinstance(message, IncomingMessage) and (message.chat_id, message.text) == ("lisi", "你好")


async def test_a_wrong_secret_fails_the_start_with_a_config_error(make: Make) -> None:
    with pytest.raises(ConfigError, match="WECOM_BOT_SECRET"):
        await make(env={"WECOM_BOT_SECRET": "not-the-secret"})


async def test_heartbeats_keep_an_idle_connection_open(make: Make, wecom: FakeWeCom,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(longconn.LongConnection, "heartbeat", 0.05)
    wecom.idle_timeout = 0.3  # the fake closes a socket silent this long
    adapter, _, _ = await make()
    await asyncio.sleep(1.0)
    assert adapter.connected() and wecom.connects == 1
    assert len(wecom.calls_of("ping")) >= 5


async def test_without_heartbeats_the_fake_closes_and_the_adapter_reconnects(make: Make, wecom: FakeWeCom) -> None:
    wecom.idle_timeout = 0.2
    adapter, inbox, _ = await make()
    await wecom.until(lambda: wecom.connects >= 2)
    await wecom.until(adapter.connected)
    await wecom.push_message(text("m-after", "still there?"))
    assert (await inbox.next()).text == "still there?"  # type: ignore[union-attr]


async def test_a_redelivered_message_reaches_the_hub_once(make: Make, wecom: FakeWeCom) -> None:
    _, inbox, _ = await make()
    body = text("m-twice", "once please")
    rid = await wecom.push_message(body)
    await wecom.push_message(body, req_id=rid)  # WeCom pushed it again
    await wecom.push_message(text("m-marker", "marker"))
    assert [(await inbox.next()).text, (await inbox.next()).text] == ["once please", "marker"]  # type: ignore[union-attr]


async def test_a_displacing_connection_is_not_fought_over(make: Make, wecom: FakeWeCom,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(longconn, "DISPLACED_PAUSE", 0.3)
    adapter, _, _ = await make()
    async with aiohttp.ClientSession() as http, http.ws_connect(wecom.url) as other:
        await other.send_json({"cmd": "aibot_subscribe", "headers": {"req_id": "other-1"},
                               "body": {"bot_id": BOT_ID, "secret": SECRET}})
        assert (await other.receive_json())["errcode"] == 0
        await wecom.until(lambda: not adapter.connected())
        await asyncio.sleep(0.1)
        assert wecom.connects == 2  # it waits before taking the bot back
    await wecom.until(adapter.connected, within=3)
    assert wecom.connects == 3


async def test_entering_the_chat_is_welcomed_in_chinese_first(make: Make, wecom: FakeWeCom) -> None:
    await make()
    event = {"msgid": "ev-enter-1", "aibotid": BOT_ID, "chattype": "single", "from": {"userid": "lisi"},
             "msgtype": "event", "event": {"eventtype": "enter_chat"}}
    await wecom.push_event(event)
    await wecom.until(lambda: wecom.welcomes)
    (welcome,) = wecom.welcomes
    assert welcome.startswith("你好") and "Hello" in welcome
    assert wecom.calls_of("aibot_respond_welcome_msg")[0].errcode == 0


async def test_odd_frames_are_skipped_and_the_connection_stays(make: Make, wecom: FakeWeCom) -> None:
    adapter, inbox, _ = await make()
    for odd in ("not json", b"\x00binary", "[1, 2]", '{"cmd": "aibot_unknown"}',
                '{"headers": {"req_id": "nobody-asked"}, "errcode": 0}'):
        await wecom.send_raw(odd)
    await wecom.push_message(text("m-odd", "after the noise"))
    assert (await inbox.next()).text == "after the noise"  # type: ignore[union-attr]
    assert adapter.connected() and wecom.connects == 1 and inbox.handed[1:] == []


async def test_two_missed_heartbeat_acks_close_the_connection_and_it_reopens(
        make: Make, wecom: FakeWeCom, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(longconn.LongConnection, "heartbeat", 0.05)
    monkeypatch.setattr(longconn.LongConnection, "ack_timeout", 0.1)
    monkeypatch.setattr(longconn.LongConnection, "pause", staticmethod(lambda _seconds: asyncio.sleep(0)))
    wecom.unanswered.add("ping")  # the socket looks open, nothing comes back
    adapter, inbox, _ = await make()
    await wecom.until(lambda: wecom.connects >= 2)
    assert len(wecom.calls_of("ping")) >= 2
    wecom.unanswered.clear()
    await wecom.until(adapter.connected)
    await wecom.push_message(text("m-back", "back?"))
    assert (await inbox.next()).text == "back?"  # type: ignore[union-attr]


async def test_reconnecting_keeps_trying_while_the_gateway_refuses(
        make: Make, wecom: FakeWeCom, monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def pause(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(longconn.LongConnection, "pause", staticmethod(pause))
    adapter, inbox, _ = await make()
    wecom.down = 3
    await wecom.drop()
    await wecom.until(lambda: wecom.connects == 2)
    assert wecom.refused == 3 and waits == list(longconn.BACKOFF[:4])  # one wait per attempt, growing
    await wecom.until(adapter.connected)
    await wecom.push_message(text("m-up", "up again"))
    assert (await inbox.next()).text == "up again"  # type: ignore[union-attr]


async def test_a_stop_cancels_a_hand_over_that_hangs_past_the_grace(make: Make, wecom: FakeWeCom,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(longconn, "STOP_GRACE", 0.1)
    adapter, inbox, _ = await make()
    inbox.hold()  # the hub's inbox write never finishes
    await wecom.push_message(text("m-stuck", "stuck"))
    await asyncio.wait_for(inbox.arriving.wait(), 5)
    started = asyncio.get_running_loop().time()
    await adapter.stop()
    assert asyncio.get_running_loop().time() - started < 2.0 and inbox.accepted == []
    assert not adapter.connected()
    assert [t for t in asyncio.all_tasks() if "_deliver" in repr(t.get_coro())] == []
