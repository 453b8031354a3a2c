"""Long connection: real lark.ws.Client in its thread ↔ the fake's protobuf websocket; loop never blocked."""

from __future__ import annotations

import asyncio
import base64
import json
import time

from bot.messages import ChatRef
from bot.replies import Reply
from tests.adapters.feishu.conftest import StartAdapter, eventually
from tests.fakes.feishu_api import BOT_OPEN_ID, FakeFeishu, card_action_event, message_event


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
    await asyncio.sleep(0.1)
    assert len(h.received) == 1


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
    await h.adapter.stop()
    assert not h.adapter.connected()


async def ticker(gaps: list[float], stop: asyncio.Event) -> None:
    last = time.monotonic()
    while not stop.is_set():
        await asyncio.sleep(0.005)
        now = time.monotonic()
        gaps.append(now - last)
        last = now


async def test_token_fetch_and_refresh_never_block_the_loop(fake: FakeFeishu, start_adapter: StartAdapter) -> None:
    fake.token_delay = 0.5  # a slow token endpoint: a blocking fetch would freeze the loop this long
    gaps: list[float] = []
    stop = asyncio.Event()
    ticking = asyncio.create_task(ticker(gaps, stop))
    h = await start_adapter("websocket")
    fake.expire_tokens()  # the next call refreshes the token
    await h.adapter.send(ChatRef("feishu", "oc_dm"), Reply("after refresh"))
    stop.set()
    await ticking
    assert len(fake.requests("POST", "tenant_access_token")) == 2
    assert sum(gaps) > 0.9  # the ticker really ran across both slow fetches
    assert max(gaps) < 0.05, f"event loop blocked for {max(gaps) * 1000:.0f} ms"

