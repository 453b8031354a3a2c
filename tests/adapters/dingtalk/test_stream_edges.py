"""The Stream connection when the gateway or the hub misbehave: frames that are no JSON object, a refused
upgrade at start, reopening that fails for a while or for good, frames arriving while the adapter stops, and
a hub that fails on a frame."""

from __future__ import annotations

import asyncio

import pytest

from adapters.dingtalk import stream
from bot.messages import InboundEvent
from tests.adapters.dingtalk.conftest import Make
from tests.adapters.dingtalk.test_stream import message
from tests.fakes.dingtalk_api import FakeDingTalk
from tests.fakes.dingtalk_gateway import ROBOT_TOPIC
from tests.harness import wait_for


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The reconnect back-off the connection asked for, each wait cut to 10 ms."""
    asked: list[float] = []

    async def pause(seconds: float) -> None:
        asked.append(seconds)
        await asyncio.sleep(0.01)

    monkeypatch.setattr(stream.StreamConnection, "pause", staticmethod(pause))
    return asked


async def test_frames_that_are_no_json_object_are_skipped_and_the_next_is_taken(
        make: Make, dingtalk: FakeDingTalk, caplog: pytest.LogCaptureFixture) -> None:
    _, inbox, _ = await make()
    await dingtalk.send_raw("{not json")
    await dingtalk.send_raw("[1, 2, 3]")
    frame = await dingtalk.push(ROBOT_TOPIC, dingtalk.robot_frame(message("msg-after-junk", "still here")))
    assert (await dingtalk.until_acked(frame))["code"] == 200
    assert [m.text for m in inbox.handed] == ["still here"]  # type: ignore[attr-defined]
    assert len(dingtalk.acks) == 1  # nothing answered the junk
    assert caplog.text.count("unreadable stream frame skipped") == 2


async def test_a_refused_upgrade_at_start_is_tried_again(
        make: Make, dingtalk: FakeDingTalk, pauses: list[float]) -> None:
    dingtalk.socket_refusals = 1  # a gateway node going away: the next ticket gets a socket
    adapter, _, _ = await make()
    assert adapter.connected() and dingtalk.ws_connects == 1 and len(dingtalk.opens) == 2 and pauses == [1.0]


async def test_credentials_refused_after_a_refused_upgrade_fail_the_start(
        make: Make, dingtalk: FakeDingTalk, monkeypatch: pytest.MonkeyPatch) -> None:
    async def rotate(_seconds: float) -> None:  # the secret is rotated while the first socket is refused
        dingtalk.client_secret = "rotated in the console"

    monkeypatch.setattr(stream.StreamConnection, "pause", staticmethod(rotate))
    dingtalk.socket_refusals = 1
    with pytest.raises(ConnectionError, match="refused the Stream connection: InvalidClient"):
        await make()


async def test_reopening_backs_off_while_the_gateway_fails_then_connects(
        make: Make, dingtalk: FakeDingTalk, pauses: list[float]) -> None:
    adapter, inbox, _ = await make()
    dingtalk.fail("/gateway/connections/open", 500, "ServiceUnavailable", times=3)
    await dingtalk.drop()
    await wait_for(lambda: dingtalk.ws_connects == 2 and adapter.connected())
    assert pauses == [1.0, 2.0, 5.0, 10.0]  # 1 s after the drop, then longer after each failed attempt
    frame = await dingtalk.push(ROBOT_TOPIC, dingtalk.robot_frame(message("msg-back", "back")))
    await dingtalk.until_acked(frame)
    assert [m.text for m in inbox.handed] == ["back"]  # type: ignore[attr-defined]


async def test_credentials_refused_while_reopening_leave_the_adapter_down_and_restartable(
        make: Make, dingtalk: FakeDingTalk, pauses: list[float], caplog: pytest.LogCaptureFixture) -> None:
    """The watchdog restarts a down adapter with stop() then start(): neither may keep failing on the old refusal."""
    adapter, inbox, _ = await make()
    secret, dingtalk.client_secret = dingtalk.client_secret, "rotated in the console"
    await dingtalk.drop()
    await wait_for(lambda: not adapter.connected() and len(dingtalk.opens) == 2)
    await asyncio.sleep(0.1)
    assert len(pauses) == 1 and dingtalk.ws_connects == 1  # refused once: not asked again and again
    assert "refused the credentials while reconnecting: InvalidClient" in caplog.text
    await adapter.stop()
    dingtalk.client_secret = secret  # the operator put the old secret back
    await adapter.start(inbox)
    assert adapter.connected() and dingtalk.ws_connects == 2


async def test_frames_arriving_while_stopping_are_left_for_redelivery(
        make: Make, dingtalk: FakeDingTalk, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "STOP_GRACE", 0.5)
    adapter, inbox, _ = await make()
    gate = inbox.hold()  # the hub does not take the first one in
    first = await dingtalk.push(ROBOT_TOPIC, dingtalk.robot_frame(message("msg-hangs")))
    await asyncio.wait_for(inbox.arriving.wait(), 5)
    stopping = asyncio.create_task(adapter.stop())
    await asyncio.sleep(0.1)
    late = await dingtalk.push(ROBOT_TOPIC, dingtalk.robot_frame(message("msg-late")))
    await wait_for(lambda: any(a["headers"]["messageId"] == late for a in dingtalk.acks))
    (refusal,) = [a for a in dingtalk.acks if a["headers"]["messageId"] == late]
    assert refusal["code"] != 200 and dingtalk.acked(late) is None  # not done: DingTalk pushes it again
    await asyncio.wait_for(stopping, 5)  # the hanging hand-over is cancelled after the grace
    assert dingtalk.acked(first) is None and [m.message_id for m in inbox.accepted] == []  # type: ignore[attr-defined]
    assert [m.message_id for m in inbox.handed] == ["msg-hangs"]  # type: ignore[attr-defined]
    gate.set()
    await adapter.start(inbox)  # the late one was not marked seen: pushed again, it is taken in
    assert (await dingtalk.until_acked(late))["code"] == 200
    assert "msg-late" in [m.message_id for m in inbox.accepted]  # type: ignore[attr-defined]


async def test_a_frame_the_hub_fails_on_is_not_acknowledged_as_done(make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, _, _ = await make()
    dingtalk.redeliver_after = 60.0

    async def failing(message: InboundEvent) -> None:
        raise RuntimeError("inbox write failed")

    adapter._on_message = failing
    frame = await dingtalk.push(ROBOT_TOPIC, dingtalk.robot_frame(message("msg-fails")))
    await wait_for(lambda: bool(dingtalk.acks))
    (ack,) = dingtalk.acks
    assert ack["headers"]["messageId"] == frame and ack["code"] != 200 and dingtalk.acked(frame) is None
