"""Stream mode on the dingtalk-stream SDK against the fake gateway: credentials, ACKs after the hand-over,
redelivery of what was never ACKed, and the access token's lifecycle."""

from __future__ import annotations

import asyncio

import pytest

from adapters.dingtalk import stream
from bot.config import ConfigError
from bot.httpkit.tokens import TokenKeeper
from bot.messages import IncomingMessage
from bot.replies import Reply
from tests.adapters.dingtalk.conftest import Make
from tests.fakes.dingtalk_api import FakeDingTalk
from tests.fakes.dingtalk_gateway import ROBOT_TOPIC
from tests.harness import wait_for


def message(msg_id: str, text: str = "hi") -> dict[str, object]:
    return {"msgId": msg_id, "conversationType": "1", "conversationId": "cid-1", "senderStaffId": "staff-ann",
            "senderNick": "Ann", "msgtype": "text", "text": {"content": text}}


async def test_wrong_credentials_fail_the_start_with_a_clear_error(make: Make) -> None:
    with pytest.raises(ConfigError, match="DINGTALK_CLIENT_SECRET"):
        await make(DINGTALK_CLIENT_SECRET="not-the-secret")


async def test_a_gateway_refusal_is_a_connection_error(make: Make, dingtalk: FakeDingTalk) -> None:
    dingtalk.client_secret = "the gateway knows another"
    with pytest.raises(ConnectionError, match="Stream connection"):
        await make()


async def test_a_frame_is_acked_only_after_the_hand_over_and_redelivered_when_it_never_was(
        make: Make, dingtalk: FakeDingTalk, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream.StreamConnection, "pause", staticmethod(lambda _s: asyncio.sleep(0.01)))
    adapter, inbox, _ = await make()
    admit = asyncio.Event()
    handed = inbox.__call__

    async def slow_hub(msg: IncomingMessage) -> None:  # the hub's inbox is slow to take it
        await admit.wait()
        await handed(msg)

    adapter._on_message = slow_hub
    frame = await dingtalk.push(ROBOT_TOPIC, dingtalk.robot_frame(message("msg-slow")))
    await asyncio.sleep(0.2)
    assert dingtalk.acked(frame) is None  # not yet in the hub: not ACKed
    await dingtalk.drop()  # the connection goes before the ACK could
    await wait_for(lambda: dingtalk.ws_connects == 2)
    admit.set()
    ack = await dingtalk.until_acked(frame)  # pushed again on the new connection, and ACKed there
    assert ack["code"] == 200 and len(dingtalk.pushed[frame].sent_at) >= 2
    await asyncio.sleep(0.1)
    assert [m.message_id for m in inbox.handed] == ["msg-slow"]  # the redelivery was recognised by its msgId


async def test_an_expired_token_is_refreshed_and_the_call_retried(make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, inbox, _ = await make()
    await dingtalk.until_acked(await dingtalk.push(ROBOT_TOPIC, dingtalk.robot_frame(message("msg-t"))))
    chat = (await inbox.next()).chat
    dingtalk.expire_tokens()
    await adapter.send(chat, Reply("after the expiry"))
    assert dingtalk.shown("staff-ann") == ["after the expiry"]
    assert len(dingtalk.issued_tokens) == 2
    refused, retried = dingtalk.calls_to("createAndDeliver")
    assert refused.headers["x-acs-dingtalk-access-token"] != retried.headers["x-acs-dingtalk-access-token"]


async def test_the_token_is_renewed_in_the_background_before_it_expires(
        make: Make, dingtalk: FakeDingTalk, monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    renew = asyncio.Event()

    async def pause(seconds: float) -> None:
        waits.append(seconds)
        await renew.wait()
        renew.clear()

    monkeypatch.setattr(TokenKeeper, "pause", staticmethod(pause))
    dingtalk.token_lifetime = 600
    await make()
    renew.set()
    await wait_for(lambda: len(dingtalk.issued_tokens) == 2)
    assert waits[0] == 300  # at half its lifetime; no call waited for it


async def test_a_gateway_that_answers_nothing_useful_is_a_connection_error(
        make: Make, dingtalk: FakeDingTalk) -> None:
    dingtalk.fail("/gateway/connections/open", 500, "ServiceUnavailable")
    with pytest.raises(ConnectionError, match="Stream connection"):
        await make()
