"""HTTP callback mode: a robot message POSTed with DingTalk's timestamp + sign is taken; one without them,
with an empty, wrong or stale signature is refused with 401 and never reaches the hub."""

from __future__ import annotations

import json
import time

import aiohttp
import pytest

from adapters.dingtalk import callback
from tests.adapters.contract.driver import serve_routes
from tests.adapters.dingtalk.conftest import Make
from tests.fakes.dingtalk_api import CLIENT_SECRET, FakeDingTalk

MESSAGE = {"msgId": "msg-http-1", "conversationType": "1", "conversationId": "cid-1", "senderStaffId": "staff-bo",
           "senderNick": "Bo", "msgtype": "text", "text": {"content": "hello over http"}}


def signed(timestamp_ms: int, secret: str = CLIENT_SECRET) -> dict[str, str]:
    stamp = str(timestamp_ms)
    return {"timestamp": stamp, "sign": callback.signature(secret, stamp)}


def now_ms() -> int:
    return int(time.time() * 1000)


async def post(make: Make, headers: dict[str, str], body: dict[str, object] = MESSAGE) -> tuple[int, list[object]]:
    adapter, inbox, routes = await make("http")
    assert adapter.connected()
    runner, base = await serve_routes(routes)
    try:
        async with aiohttp.ClientSession() as http, http.post(
                base + "/dingtalk/callback", data=json.dumps(body), headers=headers) as resp:
            return resp.status, list(inbox.handed)
    finally:
        await runner.cleanup()


async def test_a_signed_callback_is_taken(make: Make, dingtalk: FakeDingTalk) -> None:
    status, handed = await post(make, signed(now_ms()))
    assert status == 200
    assert [(m.chat_id, m.text) for m in handed] == [("staff-bo", "hello over http")]  # type: ignore[attr-defined]


async def test_a_signed_card_callback_is_a_button_press(make: Make) -> None:
    press = {"outTrackId": "card-1", "userId": "staff-bo", "spaceType": "IM_GROUP", "spaceId": "cid-g",
             "content": json.dumps({"cardPrivateData": {"actionIds": ["/list"], "params": {}}})}
    status, handed = await post(make, signed(now_ms()), press)
    assert status == 200
    assert [(m.chat_id, m.text, m.is_button) for m in handed] == [("cid-g", "/list", True)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("headers", [
    {},
    {"timestamp": "", "sign": ""},
    {"timestamp": str(now_ms()), "sign": ""},
    {**signed(now_ms()), "sign": callback.signature("another-secret", str(now_ms()))},
    signed(now_ms() - 3_700_000),  # over an hour old: a replay
    {"timestamp": "soon", "sign": "x"},
], ids=["absent", "empty", "no-sign", "wrong", "stale", "malformed"])
async def test_an_unsigned_or_badly_signed_callback_is_refused(make: Make, headers: dict[str, str]) -> None:
    status, handed = await post(make, headers)
    assert status == 401 and handed == []


def test_the_signature_is_dingtalks_hmac_sha256_of_timestamp_and_secret() -> None:
    # Base64(HMAC-SHA256(secret, "1700000000000\nsecret")), computed independently
    import base64
    import hashlib
    import hmac
    expect = base64.b64encode(hmac.new(b"secret", b"1700000000000\nsecret", hashlib.sha256).digest()).decode()
    assert callback.signature("secret", "1700000000000") == expect
    callback.check({"timestamp": "1700000000000", "sign": expect}, "secret", now_ms=1700000000000 + 3_599_000)
    with pytest.raises(callback.Rejected):
        callback.check({"timestamp": "1700000000000", "sign": expect}, "secret", now_ms=1700000000000 + 3_601_000)
