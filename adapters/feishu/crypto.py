"""Open a Feishu webhook envelope: decrypt, check the verification token and the signature.

We check before handing the body to lark-oapi's dispatcher because the dispatcher answers every
failure (bad signature, an event type we did not register) with HTTP 500, which makes Feishu retry;
here a forgery gets a 401 and an event we do not handle can be acknowledged with 200.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

from lark_oapi.core.utils import AESCipher

DECRYPT_FAILED = ("cannot decrypt event: FEISHU_ENCRYPT_KEY is not the app's Encrypt Key "
                  "(Events & Callbacks → Encryption Strategy)")


class Rejected(Exception):
    """The request is not from Feishu (or not for this app)."""


def signature(timestamp: str, nonce: str, encrypt_key: str, body: bytes) -> str:
    """X-Lark-Signature = sha256(timestamp + nonce + encrypt_key + raw body), hex."""
    return hashlib.sha256((timestamp + nonce + encrypt_key).encode() + body).hexdigest()


def open_envelope(
    body: bytes, headers: Mapping[str, str], encrypt_key: str, verification_token: str
) -> dict[str, Any]:
    """Return the plaintext event; raise Rejected when it fails any check that is configured."""
    try:
        outer = json.loads(body)
    except ValueError as e:
        raise Rejected("body is not JSON") from e
    if not isinstance(outer, dict):
        raise Rejected("body is not a JSON object")
    event = outer
    if "encrypt" in outer:
        if not encrypt_key:
            raise Rejected("encrypted event but FEISHU_ENCRYPT_KEY is not set")
        try:
            event = json.loads(AESCipher(encrypt_key).decrypt_str(str(outer["encrypt"])))
        except (ValueError, UnicodeDecodeError) as e:
            raise Rejected(DECRYPT_FAILED) from e
        if not isinstance(event, dict):
            raise Rejected("decrypted event is not a JSON object")
    elif encrypt_key:
        raise Rejected("plaintext event but an encrypt key is configured")
    header = event.get("header")
    token = header.get("token") if isinstance(header, dict) else event.get("token")
    if verification_token and not hmac.compare_digest(str(token or ""), verification_token):
        raise Rejected("verification token mismatch")
    if event.get("type") != "url_verification" and encrypt_key:
        expected = signature(
            headers.get("X-Lark-Request-Timestamp", ""),
            headers.get("X-Lark-Request-Nonce", ""),
            encrypt_key,
            body,
        )
        if not hmac.compare_digest(headers.get("X-Lark-Signature", ""), expected):
            raise Rejected("bad signature")
    return event


def event_type(event: Mapping[str, Any]) -> str:
    """`header.event_type` of a schema 2.0 event, "url_verification", or "" for anything else."""
    header = event.get("header")
    if isinstance(header, dict):
        return str(header.get("event_type") or "")
    return str(event.get("type") or "")
