"""The long connection when Feishu misbehaves: a busy or refusing endpoint, refused upgrades, frames no client
should get, a handler that fails, and connections dropped with events still being taken in."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio

from adapters.feishu.frames import CONTROL, Frame
from adapters.feishu.longconn import LongConnection, Refused
from adapters.feishu.transport import FeishuHttp
from tests.adapters.feishu.conftest import eventually
from tests.fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishu
from tests.fakes.feishu_events import message_event
from tests.fakes.feishu_ws import BUSY

FAST = {"ReconnectCount": -1, "ReconnectInterval": 0.02, "ReconnectNonce": 0, "PingInterval": 120}
Handler = Callable[[bytes], Awaitable[dict[str, Any] | None]]
Connect = Callable[..., Awaitable[LongConnection]]


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeFeishu]:
    server = FakeFeishu()
    server.ws_client_config = dict(FAST)
    await server.start()
    yield server
    await server.stop()


@pytest_asyncio.fixture
async def connect(fake: FakeFeishu) -> AsyncIterator[Connect]:
    """connect(handler=..., start=True) → a LongConnection to the fake, its events recorded in `events`."""
    http = FeishuHttp(fake.domain, APP_ID, APP_SECRET)
    await http.start()
    made: list[LongConnection] = []

    async def make(handler: Handler | None = None, start: bool = True) -> LongConnection:
        conn = LongConnection(http, APP_ID, APP_SECRET, handler or record)
        conn.settings.update(FAST)  # until an endpoint answer brings the platform's own
        made.append(conn)
        if start:
            await conn.start()
        return conn

    yield make
    for conn in made:
        await conn.stop()
    await http.close()


events: list[dict[str, Any]] = []


async def record(payload: bytes) -> dict[str, Any] | None:
    events.append(json.loads(payload))
    return None


@pytest.fixture(autouse=True)
def _fresh_events() -> None:
    events.clear()


def event(event_id: str) -> dict[str, Any]:
    return message_event(event_id, chat_type="p2p", text="hi")


async def test_a_busy_endpoint_at_start_is_tried_again_until_it_answers(fake: FakeFeishu, connect: Connect) -> None:
    fake.ws_endpoint_answers = [(200, {"code": BUSY, "msg": "internal error"}), (502, "<html>bad gateway</html>")]
    conn = await connect()  # neither answer fails the start: the keeper goes on trying
    assert not conn.is_connected()
    await eventually(conn.is_connected)
    assert fake.ws_endpoint_calls == 3 and fake.ws_connects == 1
    await fake.push_ws_event(event("after-busy"))
    await eventually(lambda: len(events) == 1)


async def test_an_endpoint_refusal_at_start_propagates(fake: FakeFeishu, connect: Connect) -> None:
    fake.ws_endpoint_answers = [(200, {"code": 10003, "msg": "app not found"})]
    with pytest.raises(Refused, match=r"app not found \(10003\)"):
        await connect()
    assert fake.ws_connects == 0


async def test_a_refusal_while_reconnecting_stops_trying(fake: FakeFeishu, connect: Connect) -> None:
    conn = await connect()
    assert conn.is_connected()
    fake.ws_endpoint_answers = [(200, {"code": 10003, "msg": "app was disabled"})]
    await fake.drop_ws()
    await eventually(lambda: conn._keeper is not None and conn._keeper.done())
    await asyncio.sleep(0.1)
    assert not conn.is_connected() and fake.ws_endpoint_calls == 2 and fake.ws_connects == 1


async def test_reconnecting_gives_up_after_the_platforms_reconnect_count(fake: FakeFeishu, connect: Connect) -> None:
    fake.ws_client_config = {**FAST, "ReconnectCount": 2}
    conn = await connect()
    fake.ws_endpoint_answers = [(200, {"code": 0, "msg": "ok", "data": {}})] * 5  # no URL: not worth connecting to
    await fake.drop_ws()
    await eventually(lambda: conn._keeper is not None and conn._keeper.done())
    assert fake.ws_endpoint_calls == 3  # the first connection, then the two attempts the platform allows
    assert not conn.is_connected() and fake.ws_connects == 1


@pytest.mark.parametrize(("headers", "refused"), [
    ({"handshake-status": "514", "handshake-autherrcode": "1000040350", "handshake-msg": "exceed conn limit"}, True),
    ({"handshake-status": "514", "handshake-autherrcode": "1", "handshake-msg": "auth failed"}, False),
    ({}, False),
])
async def test_a_refused_upgrade_is_final_only_when_the_platform_says_so(
        fake: FakeFeishu, connect: Connect, headers: dict[str, str], refused: bool) -> None:
    fake.ws_handshake_refusal = headers
    conn = await connect(start=False)
    if refused:
        with pytest.raises(Refused, match=r"exceed conn limit \(514\)"):
            await conn.start()
        return
    await conn.start()  # worth another try: the keeper goes on
    await eventually(lambda: fake.ws_endpoint_calls >= 3)
    assert not conn.is_connected()
    fake.ws_handshake_refusal = None
    await eventually(conn.is_connected)


async def test_frames_no_client_should_get_are_skipped_and_the_next_event_still_arrives(
        fake: FakeFeishu, connect: Connect) -> None:
    await connect()
    await fake.push_ws_raw("a text message")
    await fake.push_ws_raw(b"\xff\xff\xff not protobuf")
    await fake.push_ws_raw(Frame(service=7, method=CONTROL, headers=[("type", "pong")], payload=b"{not json").encode())
    await fake.push_ws_raw(Frame(service=7, method=CONTROL, headers=[("type", "ping")]).encode())
    await fake.push_ws_event(event("too-many"), parts=65)  # more parts than any event has: dropped
    await fake.push_ws_event(event("bad-seq"), parts=2, seqs=[0, 9])  # a part past the end
    await fake.push_ws_event(event("fine"))
    await eventually(lambda: len(events) == 1)
    await asyncio.sleep(0.1)
    assert [e["header"]["event_id"] for e in events] == ["fine"]
    assert len(fake.ws_acks) == 1  # the dropped events got no acknowledgement: Feishu sends them again


async def test_a_pong_without_settings_keeps_the_current_ones(fake: FakeFeishu, connect: Connect) -> None:
    conn = await connect()
    before = (conn.settings.ping_interval, conn.settings.reconnect_interval)
    await fake.push_ws_raw(Frame(service=7, method=CONTROL, headers=[("type", "pong")], payload=b"[1]").encode())
    await fake.push_ws_event(event("after-pong"))
    await eventually(lambda: len(events) == 1)
    assert (conn.settings.ping_interval, conn.settings.reconnect_interval) == before


async def test_a_failing_handler_answers_500_so_feishu_sends_the_event_again(
        fake: FakeFeishu, connect: Connect) -> None:
    async def broken(payload: bytes) -> dict[str, Any] | None:
        raise RuntimeError("inbox down")

    await connect(broken)
    await fake.push_ws_event(event("fails"))
    await eventually(lambda: len(fake.ws_acks) == 1)
    assert fake.ws_acks == [{"code": 500}]


async def test_events_still_being_taken_in_when_the_socket_drops_are_cancelled_unacknowledged(
        fake: FakeFeishu, connect: Connect) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def slow(payload: bytes) -> dict[str, Any] | None:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return None

    conn = await connect(slow)
    await fake.push_ws_event(event("slow"))
    await asyncio.wait_for(started.wait(), 5)
    await fake.drop_ws()
    await asyncio.wait_for(cancelled.wait(), 5)
    await eventually(lambda: fake.ws_connects == 2 and conn.is_connected())
    assert fake.ws_acks == [] and conn._answering == set()

