"""Long connection: our client on the hub's loop ↔ the fake's protobuf websocket (Feishu's wire protocol)."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from tests.adapters.feishu.conftest import StartAdapter, env, eventually
from tests.fakes.feishu_api import BOT_OPEN_ID, FakeFeishu
from tests.fakes.feishu_events import card_action_event, message_event
from tests.fakes.proxy import FakeProxy


async def test_frame_received_reaches_on_message_and_is_acked(start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    assert h.adapter.connected()
    event = message_event("ws-1", text="@_user_1 hi there", mentions=(("@_user_1", BOT_OPEN_ID, "Hub"),))
    await h.fake.push_ws_event(event)
    await h.fake.push_ws_event(event)  # redelivered over the long connection too
    (msg,) = await h.wait_received(1)
    assert (msg.text, msg.mentioned, msg.is_group, msg.message_id) == ("hi there", True, True, "om_in_ws-1")
    await eventually(lambda: len(h.fake.ws_acks) == 2)
    assert [ack["code"] for ack in h.fake.ws_acks] == [200, 200]
    await h.adapter.stop()  # quiescent: events taken in reach the hub first, nothing more can arrive
    assert len(h.received) == 1


async def test_an_event_is_acknowledged_only_once_the_hub_has_taken_it_in(start_adapter: StartAdapter) -> None:
    """Feishu pushes an unacknowledged event again: a crash before the inbox has it must not lose it."""
    h = await start_adapter("websocket")
    h.admit.clear()
    mention = (("@_user_1", BOT_OPEN_ID, "Hub"),)
    await h.fake.push_ws_event(message_event("ws-slow", text="@_user_1 one", mentions=mention))
    await h.fake.push_ws_event(message_event("ws-next", chat_type="p2p", text="two"))
    await asyncio.sleep(0.3)
    assert h.fake.ws_acks == [] and h.received == []  # the connection kept reading: both are waiting
    h.admit.set()
    await eventually(lambda: len(h.fake.ws_acks) == 2)
    assert [m.message_id for m in h.received] == ["om_in_ws-slow", "om_in_ws-next"]


async def test_unhandled_event_type_is_acked_200_over_the_long_connection(start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    event = message_event("ws-other")
    event["header"]["event_type"] = "im.chat.member.bot.added_v1"
    await h.fake.push_ws_event(event)
    await eventually(lambda: len(h.fake.ws_acks) == 1)
    assert h.fake.ws_acks[0]["code"] == 200  # a 500 would make Feishu redeliver it
    assert h.received == []


async def test_card_press_over_the_long_connection_answers_a_toast(start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    await h.fake.push_ws_event(card_action_event("ws-press", "/new", card_message_id="om_card_9"))
    (msg,) = await h.wait_received(1)
    assert (msg.text, msg.is_button) == ("/new", True)
    await eventually(lambda: len(h.fake.ws_acks) == 1)
    answer = json.loads(base64.b64decode(h.fake.ws_acks[0]["data"]))
    assert answer["toast"]["content"] == "Running /new"


async def test_stop_closes_the_websocket_and_its_tasks(start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    assert h.adapter.connected() and h.fake.ws_connected.is_set()
    connection = h.adapter._ws
    assert connection is not None
    await h.adapter.stop()
    assert not h.adapter.connected()
    await eventually(lambda: not h.fake.ws_connected.is_set())  # the platform saw the socket close
    assert connection._keeper is None and connection._pinger is None


async def test_a_dropped_connection_comes_back_and_events_flow_again(start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    assert h.adapter._ws is not None
    h.adapter._ws.settings.update({"ReconnectNonce": 0, "ReconnectInterval": 0.05})
    await h.fake.drop_ws()
    await eventually(lambda: h.fake.ws_connects == 2 and h.adapter.connected())
    await h.fake.push_ws_event(message_event("ws-after", chat_type="p2p", text="back again"))
    (msg,) = await h.wait_received(1)
    assert msg.text == "back again"


async def test_an_event_split_into_parts_is_joined_before_parsing(start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    await h.fake.push_ws_event(message_event("ws-split", chat_type="p2p", text="x" * 3000), parts=3)
    (msg,) = await h.wait_received(1)
    assert msg.text == "x" * 3000
    await eventually(lambda: len(h.fake.ws_acks) == 1)  # one ack, for the last part


async def test_pings_get_pongs_that_carry_the_platforms_settings(
        start_adapter: StartAdapter, fake: FakeFeishu) -> None:
    fake.ws_client_config = {"PingInterval": 1}  # from the endpoint: a ping at connect, then every second
    h = await start_adapter("websocket")
    await eventually(lambda: h.fake.ws_pings >= 1)
    h.fake.ws_client_config = {"PingInterval": 1, "ReconnectInterval": 7, "ReconnectNonce": 3, "ReconnectCount": 5}
    assert h.adapter._ws is not None
    settings = h.adapter._ws.settings
    await eventually(lambda: settings.reconnect_count == 5)  # the second ping's pong
    assert (settings.ping_interval, settings.reconnect_interval, settings.reconnect_nonce,
            settings.reconnect_count) == (1.0, 7.0, 3.0, 5)


async def test_a_legacy_card_frame_is_left_unanswered(start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    await h.fake.push_ws_event(card_action_event("ws-card", "/new", card_message_id="om_c"), kind="card")
    await h.fake.push_ws_event(message_event("ws-next", chat_type="p2p", text="next"))
    await h.wait_received(1)
    await eventually(lambda: len(h.fake.ws_acks) == 1)
    assert [m.text for m in h.received] == ["next"]


async def test_a_forbidden_handshake_fails_start_with_the_platforms_reason(
        start_adapter: StartAdapter, fake: FakeFeishu) -> None:
    fake.ws_handshake_refusal = {"handshake-status": "403", "handshake-msg": "app has no bot capability"}
    with pytest.raises(ConnectionError, match=r"refused the long connection: app has no bot capability \(403\)"):
        await start_adapter("websocket")


async def test_the_api_and_the_long_connection_go_through_the_proxy(start_adapter: StartAdapter) -> None:
    """Friction 3, Feishu: HTTP_PROXY reaches the adapter's one aiohttp session (REST and the websocket)."""
    proxy = FakeProxy()
    await proxy.start()
    try:
        h = await start_adapter("websocket", secrets={**env(), "HTTP_PROXY": proxy.url})
        await h.fake.push_ws_event(message_event("px-1", text="@_user_1 hi", mentions=(("@_user_1", BOT_OPEN_ID,
                                                                                          "Hub"),)))
        (msg,) = await h.wait_received(1)
        await h.adapter.stop()
    finally:
        await proxy.stop()
    assert msg.text == "hi"
    paths = {target.split("?")[0].removeprefix(h.fake.domain) for target in proxy.targets()}
    assert {"/open-apis/auth/v3/tenant_access_token/internal", "/callback/ws/endpoint"} <= paths
    assert any(target.startswith("ws://127.0.0.1") for target in proxy.targets())
