"""Webhook edge cases from the security review (issue 11, point 6): odd headers, key-only set-ups, replays."""

from __future__ import annotations

import hashlib
import json
import logging
import time

import pytest

from adapters.feishu.crypto import MAX_AGE
from tests.adapters.feishu.conftest import ENCRYPT_KEY, VERIFICATION_TOKEN, StartAdapter
from tests.fakes.feishu_api import APP_ID, APP_SECRET, BOT_OPEN_ID
from tests.fakes.feishu_events import encrypt, message_event, signed_request

IDS = {"FEISHU_APP_ID": APP_ID, "FEISHU_APP_SECRET": APP_SECRET}


def signed_at(event: dict, timestamp: int) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"encrypt": encrypt(ENCRYPT_KEY, json.dumps(event))}).encode()
    nonce = "n0nce"
    signature = hashlib.sha256((str(timestamp) + nonce + ENCRYPT_KEY).encode() + body).hexdigest()
    return body, {"Content-Type": "application/json", "X-Lark-Request-Timestamp": str(timestamp),
                  "X-Lark-Request-Nonce": nonce, "X-Lark-Signature": signature}


async def test_non_ascii_signature_or_token_is_a_401_not_a_crash(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    body, headers = signed_request(ENCRYPT_KEY, message_event("ev-odd", chat_type="p2p", token=VERIFICATION_TOKEN))
    assert h.session is not None
    odd = {**headers, "X-Lark-Signature": "é" * 64}
    async with h.session.post(h.url, data=body, headers={k: v.encode().decode("latin-1") for k, v in odd.items()}) \
            as resp:
        assert resp.status == 401
    assert (await h.post(message_event("ev-odd-token", chat_type="p2p", token="令牌"))).status == 401
    await h.adapter.stop()
    assert h.received == []


@pytest.mark.parametrize("age", [MAX_AGE + 30, -(MAX_AGE + 30)], ids=["replayed", "from-the-future"])
async def test_a_signed_event_off_the_clock_is_refused(start_adapter: StartAdapter, age: int) -> None:
    h = await start_adapter()
    body, headers = signed_at(message_event("ev-old", chat_type="p2p", token=VERIFICATION_TOKEN),
                              int(time.time()) - age)
    assert h.session is not None
    async with h.session.post(h.url, data=body, headers=headers) as resp:
        assert resp.status == 401
    fresh_body, fresh = signed_at(message_event("ev-fresh", chat_type="p2p", token=VERIFICATION_TOKEN),
                                  int(time.time()) - 5)
    async with h.session.post(h.url, data=fresh_body, headers=fresh) as resp:
        assert resp.status == 200
    assert len(await h.wait_received(1)) == 1  # only the fresh one


async def test_an_encrypt_key_alone_is_enough(start_adapter: StartAdapter) -> None:
    h = await start_adapter(secrets={**IDS, "FEISHU_ENCRYPT_KEY": ENCRYPT_KEY})
    resp = await h.post(message_event("ev-key-only", chat_type="p2p", text="hi there", token="tok-from-feishu"))
    assert resp.status == 200
    [msg] = await h.wait_received(1)
    assert msg.text == "hi there"


async def test_a_token_only_webhook_is_warned_about(start_adapter: StartAdapter,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "adapters.feishu.adapter"):
        await start_adapter(secrets={**IDS, "FEISHU_VERIFICATION_TOKEN": VERIFICATION_TOKEN})
    assert "the webhook has no FEISHU_ENCRYPT_KEY, so events are neither encrypted nor signed" in caplog.text


async def test_a_group_command_without_a_mention_is_not_for_this_bot(start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    await h.post(message_event("ev-cmd-other", text="/new", token=VERIFICATION_TOKEN))  # meant for another bot
    await h.post(message_event("ev-cmd-ours", text="@_user_1 /new", token=VERIFICATION_TOKEN,
                               mentions=(("@_user_1", BOT_OPEN_ID, "Hub"),)))
    await h.post(message_event("ev-cmd-dm", text="/new", chat_type="p2p", token=VERIFICATION_TOKEN))
    received = await h.wait_received(3)
    assert sorted((m.message_id, type(m).__name__) for m in received) == [
        ("om_in_ev-cmd-dm", "IncomingMessage"), ("om_in_ev-cmd-other", "Overheard"),
        ("om_in_ev-cmd-ours", "IncomingMessage")]
