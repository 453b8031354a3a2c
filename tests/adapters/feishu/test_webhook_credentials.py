"""Absent, empty and wrong, for each of a Feishu webhook's credentials: the signature and what it signs (the
timestamp and nonce headers), the verification token inside the event, and the encryption under the app's
Encrypt Key. Every forgery gets 401 and reaches nobody; the genuine push that follows is delivered."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import pytest

from tests.adapters.feishu.conftest import ENCRYPT_KEY, VERIFICATION_TOKEN, StartAdapter
from tests.fakes.feishu_api import APP_ID, APP_SECRET
from tests.fakes.feishu_events import encrypt, message_event, signed_request

SIGNED = ("X-Lark-Signature", "X-Lark-Request-Timestamp", "X-Lark-Request-Nonce")


def _event(event_id: str, token: str | None = VERIFICATION_TOKEN) -> dict[str, Any]:
    event = message_event(event_id, chat_type="p2p", text="hi", token=token or "")
    if token is None:
        del event["header"]["token"]
    return event


def _signed(body: bytes, timestamp: str | None = None, nonce: str = "n0nce") -> dict[str, str]:
    timestamp = str(int(time.time())) if timestamp is None else timestamp
    digest = hashlib.sha256((timestamp + nonce + ENCRYPT_KEY).encode() + body).hexdigest()
    return {"Content-Type": "application/json", "X-Lark-Request-Timestamp": timestamp,
            "X-Lark-Request-Nonce": nonce, "X-Lark-Signature": digest}


def _forged_headers() -> list[tuple[str, bytes, dict[str, str]]]:
    """(what is wrong, body, headers) for every header a signed push carries."""
    body, right = signed_request(ENCRYPT_KEY, _event("ev-headers"))
    cases: list[tuple[str, bytes, dict[str, str]]] = []
    for name in SIGNED:
        others = {k: v for k, v in right.items() if k != name}
        cases += [(f"{name} absent", body, others), (f"{name} empty", body, {**others, name: ""}),
                  (f"{name} wrong", body, {**others, name: right[name][::-1] + "0"})]
    stale = str(int(time.time()) - 3600)
    cases += [("signature of another body", body + b" ", right),
              ("stale timestamp, correctly signed", body, _signed(body, stale)),
              ("timestamp not a number, correctly signed", body, _signed(body, "soon")),
              ("signature upper-cased", body, {**right, "X-Lark-Signature": right["X-Lark-Signature"].upper()})]
    return cases


def _forged_envelopes() -> list[tuple[str, bytes]]:
    """(what is wrong, body) for the token and the encryption, each correctly signed."""
    plain = json.dumps(_event("ev-plain")).encode()
    cases = [(f"verification token {name}", json.dumps({"encrypt": encrypt(ENCRYPT_KEY, json.dumps(
        _event(f"ev-token-{name}", token)))}).encode())
        for name, token in (("absent", None), ("empty", ""), ("wrong", "not-the-token"),
                            ("padded", VERIFICATION_TOKEN + " "), ("truncated", VERIFICATION_TOKEN[:-1]))]
    return [*cases, ("plaintext under an encrypt key", plain),
            ("encrypt empty", b'{"encrypt": ""}'), ("encrypt not base64", b'{"encrypt": "%%%"}'),
            ("encrypted with another key", json.dumps({"encrypt": encrypt("another-key", plain.decode())}).encode())]


@pytest.mark.parametrize(("wrong", "body", "headers"), _forged_headers(), ids=lambda v: v if isinstance(v, str) else "")
async def test_a_push_with_an_absent_empty_or_wrong_signature_header_is_refused(
        start_adapter: StartAdapter, wrong: str, body: bytes, headers: dict[str, str]) -> None:
    h = await start_adapter()
    assert h.session is not None
    async with h.session.post(h.url, data=body, headers=headers) as resp:
        assert resp.status == 401, wrong
    assert (await h.post(_event("ev-genuine"))).status == 200
    [msg] = await h.wait_received(1)
    assert msg.message_id == "om_in_ev-genuine"


async def test_a_push_with_an_absent_empty_or_wrong_token_or_encryption_is_refused(
        start_adapter: StartAdapter) -> None:
    h = await start_adapter()
    assert h.session is not None
    for wrong, body in _forged_envelopes():
        async with h.session.post(h.url, data=body, headers=_signed(body)) as resp:
            assert resp.status == 401, wrong
    assert (await h.post(_event("ev-genuine"))).status == 200
    await h.wait_received(1)
    await h.adapter.stop()  # quiescent: whatever was taken in has reached the hub
    assert [m.message_id for m in h.received] == ["om_in_ev-genuine"]


async def test_what_feishu_does_not_sign_is_taken_without_a_signature(start_adapter: StartAdapter) -> None:
    """Mutation-guided: the URL check is not signed even under an encrypt key, and a token-only webhook has no
    signature at all; requiring one there would refuse Feishu itself."""
    h = await start_adapter()
    assert h.session is not None
    challenge = json.dumps({"encrypt": encrypt(ENCRYPT_KEY, json.dumps(
        {"challenge": "ch-1", "token": VERIFICATION_TOKEN, "type": "url_verification"}))}).encode()
    async with h.session.post(h.url, data=challenge, headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 200 and await resp.json() == {"challenge": "ch-1"}
    plain = await start_adapter(secrets={"FEISHU_APP_ID": APP_ID, "FEISHU_APP_SECRET": APP_SECRET,
                                         "FEISHU_VERIFICATION_TOKEN": VERIFICATION_TOKEN})
    assert plain.session is not None
    async with plain.session.post(plain.url, json=_event("ev-token-only")) as resp:
        assert resp.status == 200
    [msg] = await plain.wait_received(1)
    assert msg.message_id == "om_in_ev-token-only"
