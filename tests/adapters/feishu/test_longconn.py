"""Long connection: the real lark.ws.Client in its thread ↔ the fake's protobuf websocket."""

from __future__ import annotations

import base64
import json

from tests.adapters.feishu.conftest import StartAdapter, eventually
from tests.fakes.feishu_api import BOT_OPEN_ID
from tests.fakes.feishu_events import card_action_event, message_event


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


async def test_stop_ends_the_long_connection_thread(start_adapter: StartAdapter) -> None:
    h = await start_adapter("websocket")
    assert h.adapter.connected()
    connection = h.adapter._ws
    assert connection is not None and connection._thread is not None
    thread = connection._thread
    assert thread.is_alive()
    await h.adapter.stop()
    assert not h.adapter.connected()
    assert not thread.is_alive()  # the SDK's own loop really ended, not just our reference to it
