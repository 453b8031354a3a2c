"""HTTP callback mode: DingTalk POSTs each robot message to our URL with `timestamp` (ms) and `sign`
headers, sign = Base64(HMAC-SHA256(key=app secret, "{timestamp}\\n{app secret}")). A request without them,
with a wrong one, or older than an hour is refused before its body is read as an event.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping

MAX_SKEW_MS = 3_600_000  # DingTalk's window for the timestamp


class Rejected(Exception):
    pass


def signature(secret: str, timestamp: str) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def check(headers: Mapping[str, str], secret: str, now_ms: float | None = None) -> None:
    timestamp, sign = headers.get("timestamp", ""), headers.get("sign", "")
    if not timestamp or not sign:
        raise Rejected("missing timestamp or sign")
    if not timestamp.isdigit():
        raise Rejected("malformed timestamp")
    now = time.time() * 1000 if now_ms is None else now_ms
    if abs(now - int(timestamp)) > MAX_SKEW_MS:
        raise Rejected("stale timestamp")
    if not hmac.compare_digest(sign.encode(), signature(secret, timestamp).encode()):
        raise Rejected("wrong signature")
