"""Discord's server-side rules for the fake REST API: what a message body may hold, and per-route rate
limits, on by default, with the real headers.

Every answer on a limited route carries X-RateLimit-Limit / -Remaining / -Reset / -Reset-After / -Bucket,
as Discord sends them; discord.py reads them and waits by itself when a bucket is empty. A request into
an empty bucket gets Discord's 429: {"message", "retry_after", "global": false} with Retry-After and
X-RateLimit-Scope: user. The bucket is the route's major parameter (a channel, a webhook token):
Discord documents message sends as per channel. `clock` is injectable.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

MAX_CONTENT = 2000

LimitHeaders = dict[str, str]


MESSAGE_CONTENT_INTENT = 1 << 15
CONTENT_FIELDS = {"content": "", "embeds": [], "attachments": [], "components": [], "sticker_items": []}


def as_seen_by(message: dict, intents: int, bot_id: str, bot_role: str) -> dict:
    """A MESSAGE_CREATE as the gateway delivers it: without the Message Content intent, guild messages that
    do not mention the app arrive with content, embeds, attachments and components emptied."""
    mentioned = (any(user.get("id") == bot_id for user in message.get("mentions", []))
                 or bot_role in message.get("mention_roles", []))
    if intents & MESSAGE_CONTENT_INTENT or "guild_id" not in message or mentioned:
        return message
    return {**message, **CONTENT_FIELDS}


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=json.dumps(obj).encode(), status=status,
                        headers={"Content-Type": "application/json", **(headers or {})})


def error_response(status: int, code: int, message: str) -> web.Response:
    return json_response({"message": message, "code": code}, status=status)


def invalid_body(body: dict) -> web.Response | None:
    """What Discord rejects with 400 in a message body: long content and malformed buttons."""
    if len(body.get("content") or "") > MAX_CONTENT:
        return error_response(400, 50035, "Invalid Form Body: content must be 2000 or fewer in length.")
    rows = body.get("components") or []
    buttons = [b for row in rows for b in row.get("components", [])]
    ids = [b.get("custom_id") for b in buttons]
    if len(rows) > 5 or any(len(row.get("components", [])) > 5 for row in rows) or len(set(ids)) != len(ids) \
            or any(not 1 <= len(b.get("custom_id") or "") <= 100 or len(b.get("label") or "") > 80
                   for b in buttons):
        return error_response(400, 50035, "Invalid Form Body: components")
    return None


@dataclass
class RouteLimits:
    limit: int = 5  # requests per bucket per window: messages into one channel, edits of its messages
    per: float = 5.0  # seconds
    clock: Callable[[], float] = time.monotonic
    rejected: int = 0
    _windows: dict[str, tuple[float, int]] = field(default_factory=dict)  # bucket → (reset at, used)

    def take(self, bucket: str) -> tuple[LimitHeaders, float | None]:
        """Spend one request from `bucket`: its headers, and the retry_after when the bucket is empty."""
        now = self.clock()
        reset_at, used = self._windows.get(bucket, (now + self.per, 0))
        if now >= reset_at:
            reset_at, used = now + self.per, 0
        reset_after = reset_at - now
        if used >= self.limit:
            self.rejected += 1
            headers = self._headers(bucket, 0, reset_after)
            headers |= {"Retry-After": str(math.ceil(reset_after)), "X-RateLimit-Scope": "user",
                        "Via": "1.1 google"}  # Via: discord.py tells Discord's 429 from Cloudflare's by it
            return headers, reset_after
        self._windows[bucket] = (reset_at, used + 1)
        return self._headers(bucket, self.limit - used - 1, reset_after), None

    def _headers(self, bucket: str, remaining: int, reset_after: float) -> LimitHeaders:
        return {"X-RateLimit-Limit": str(self.limit), "X-RateLimit-Remaining": str(remaining),
                "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
                "X-RateLimit-Reset-After": f"{reset_after:.3f}",
                "X-RateLimit-Bucket": hashlib.sha1(bucket.encode()).hexdigest()[:16]}


def route_bucket(method: str, parts: list[str]) -> str | None:
    """The limited routes: channel messages and typing, and interaction webhooks (followups, edits)."""
    if parts[0] == "channels" and len(parts) >= 3:
        return f"{method} channels/{parts[1]}/{'typing' if parts[-1] == 'typing' else 'messages'}"
    if parts[0] == "webhooks" and len(parts) >= 3:
        return f"{method} webhooks/{parts[1]}/{parts[2]}"
    return None


VOICE_MESSAGE = 1 << 13  # the IS_VOICE_MESSAGE message flag


def invalid_voice(body: dict, attached: list[dict[str, Any]]) -> web.Response | None:
    """A voice message is one OGG attachment with its duration and waveform, and nothing else (codes 50159-61)."""
    if body.get("content") or body.get("embeds") or body.get("components") or body.get("sticker_ids"):
        return error_response(400, 50159, "Voice messages do not support additional content")
    meta = body.get("attachments") or []
    if len(attached) != 1 or len(meta) != 1:
        return error_response(400, 50160, "Voice messages must have a single audio attachment")
    duration, waveform = meta[0].get("duration_secs"), meta[0].get("waveform")
    try:
        points = base64.b64decode(waveform or "", validate=True)
    except ValueError:
        points = b""
    if not isinstance(duration, int | float) or duration <= 0 or not points or len(points) > 256:
        return error_response(400, 50161, "Voice messages must have supporting metadata")
    return None
