"""Open a Feishu webhook envelope: decrypt, check the verification token and the signature.

A forgery gets a 401 and an event we do not handle can be acknowledged with 200 (a 500 makes Feishu retry).
AES comes from `cryptography`, imported on the first encrypted event: long-connection set-ups never load it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

DECRYPT_FAILED = ("cannot decrypt event: FEISHU_ENCRYPT_KEY is not the app's Encrypt Key "
                  "(Events & Callbacks → Encryption Strategy)")
MAX_AGE = 300  # seconds a signed request may be off the clock; an older one is a replay


class Rejected(Exception):
    """The request is not from Feishu (or not for this app)."""


def _same(given: str, expected: str) -> bool:
    """Constant-time comparison of bytes: a non-ASCII header or token is simply wrong, never a crash."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("utf-8"))


def decrypt(encrypt_key: str, blob: str) -> str:
    """Feishu's envelope: base64(IV + AES-256-CBC(sha256(encrypt_key), PKCS7(plaintext))). ValueError if not."""
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    try:
        data = base64.b64decode(blob, validate=True)
    except binascii.Error as e:
        raise ValueError("not base64") from e
    if len(data) < 32 or len(data) % 16:
        raise ValueError("invalid ciphertext length")
    key = hashlib.sha256(encrypt_key.encode()).digest()
    decryptor = Cipher(algorithms.AES(key), modes.CBC(data[:16])).decryptor()
    padded = decryptor.update(data[16:]) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    return (unpadder.update(padded) + unpadder.finalize()).decode()


def signature(timestamp: str, nonce: str, encrypt_key: str, body: bytes) -> str:
    """X-Lark-Signature = sha256(timestamp + nonce + encrypt_key + raw body), hex."""
    return hashlib.sha256((timestamp + nonce + encrypt_key).encode() + body).hexdigest()


def open_envelope(
    body: bytes, headers: Mapping[str, str], encrypt_key: str, verification_token: str, now: float | None = None
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
            event = json.loads(decrypt(encrypt_key, str(outer["encrypt"])))
        except ValueError as e:
            raise Rejected(DECRYPT_FAILED) from e
        if not isinstance(event, dict):
            raise Rejected("decrypted event is not a JSON object")
    elif encrypt_key:
        raise Rejected("plaintext event but an encrypt key is configured")
    header = event.get("header")
    token = header.get("token") if isinstance(header, dict) else event.get("token")
    if verification_token and not _same(str(token or ""), verification_token):
        raise Rejected("verification token mismatch")
    if event.get("type") != "url_verification" and encrypt_key:
        timestamp = headers.get("X-Lark-Request-Timestamp", "")
        expected = signature(timestamp, headers.get("X-Lark-Request-Nonce", ""), encrypt_key, body)
        if not _same(headers.get("X-Lark-Signature", ""), expected):
            raise Rejected("bad signature")
        if not timestamp.isdigit() or abs((time.time() if now is None else now) - int(timestamp)) > MAX_AGE:
            raise Rejected("stale or missing timestamp (a replayed request?)")
    return event


def event_type(event: Mapping[str, Any]) -> str:
    """`header.event_type` of a schema 2.0 event, "url_verification", or "" for anything else."""
    header = event.get("header")
    if isinstance(header, dict):
        return str(header.get("event_type") or "")
    return str(event.get("type") or "")
