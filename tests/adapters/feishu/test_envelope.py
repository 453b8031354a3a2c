"""Opening a webhook envelope: what cannot be decrypted, or arrives in plaintext when it must not, is refused."""

from __future__ import annotations

import base64
import json

import pytest

from adapters.feishu.crypto import DECRYPT_FAILED, Rejected, open_envelope
from tests.adapters.feishu.conftest import ENCRYPT_KEY, VERIFICATION_TOKEN
from tests.fakes.feishu_events import encrypt, message_event, signed_request

EVENT = message_event("ev-env", chat_type="p2p", token=VERIFICATION_TOKEN)


def envelope(encrypted: str) -> bytes:
    return json.dumps({"encrypt": encrypted}).encode()


@pytest.mark.parametrize(("body", "key", "reason"), [
    (envelope(encrypt("another-key", json.dumps(EVENT))), ENCRYPT_KEY, DECRYPT_FAILED),
    (envelope(base64.b64encode(b"short").decode()), ENCRYPT_KEY, DECRYPT_FAILED),
    (envelope(encrypt(ENCRYPT_KEY, "[1, 2]")), ENCRYPT_KEY, "decrypted event is not a JSON object"),
    (envelope(encrypt(ENCRYPT_KEY, json.dumps(EVENT))), "", "encrypted event but FEISHU_ENCRYPT_KEY is not set"),
    (json.dumps(EVENT).encode(), ENCRYPT_KEY, "plaintext event but an encrypt key is configured"),
    (b"{not json", ENCRYPT_KEY, "body is not JSON"),
    (b"[]", ENCRYPT_KEY, "body is not a JSON object"),
], ids=["wrong-key", "garbage", "not-an-object", "no-key-configured", "plaintext", "not-json", "array"])
def test_envelopes_that_cannot_be_opened_are_rejected(body: bytes, key: str, reason: str) -> None:
    with pytest.raises(Rejected) as caught:
        open_envelope(body, {}, key, VERIFICATION_TOKEN)
    assert str(caught.value) == reason


def test_a_signed_encrypted_event_opens_to_the_event() -> None:
    body, headers = signed_request(ENCRYPT_KEY, EVENT)
    assert open_envelope(body, headers, ENCRYPT_KEY, VERIFICATION_TOKEN) == EVENT
