"""The Events API over HTTP: Slack POSTs events, slash commands and button presses to the hub's server.

Every request must carry a valid `X-Slack-Signature` over `v0:{timestamp}:{body}` made with the signing
secret (slack_sdk's verifier), a timestamp within 5 minutes, and a signature not seen before (a captured
request replayed inside that window is refused). The answer — Slack's acknowledgement, due within 3 s — is
200 only once the event is in the hub's inbox; if that takes too long Slack gets a 503 and retries, and the
retry (`X-Slack-Retry-Num`, same event id) is recognised by the dedupe.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web
from slack_sdk.signature import SignatureVerifier

from bot.adapter import NotKept

log = logging.getLogger("bothub.slack")
FRESH = 300.0  # seconds a signed request stays valid (Slack's own rule)
ACK_WITHIN = 2.5  # seconds: the inbox must have the event by then, inside Slack's 3 s
MAX_BODY = 1_000_000
REMEMBERED = 10_000  # signatures kept for replay refusal (each for FRESH seconds)

# (envelope kind as Socket Mode names it, payload) → the acknowledgement's payload, once in the inbox
TakeIn = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]


class Rejected(Exception):
    """Not from Slack: no signature, a wrong one, a stale timestamp, a replay."""


class Verifier:
    def __init__(self, secret: str, clock: Callable[[], float] = time.time) -> None:
        self._verifier = SignatureVerifier(secret)
        self._clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def check(self, body: bytes, timestamp: str | None, signature: str | None, retry: str = "") -> None:
        """`retry`: X-Slack-Retry-Num (unsigned): a quick retry may repeat the signature; the event id's dedupe
        catches a replay that changes only this header."""
        if not timestamp or not signature:
            raise Rejected("unsigned request")
        try:
            age = abs(self._clock() - int(timestamp))
        except ValueError:
            raise Rejected("malformed timestamp") from None
        if age > FRESH:
            raise Rejected("stale timestamp")
        if not self._verifier.is_valid(body, timestamp, signature):
            raise Rejected("wrong signature")
        now = self._clock()
        while self._seen and (next(iter(self._seen.values())) < now - FRESH or len(self._seen) > REMEMBERED):
            self._seen.popitem(last=False)
        key = f"{signature}#{retry}"
        if key in self._seen:
            raise Rejected("replayed request")
        self._seen[key] = now


def decode(body: bytes, content_type: str) -> tuple[str, dict[str, Any]]:
    """(kind, payload): "events_api" and its event_callback, "slash_commands" and the form, "interactive" and
    its payload, or "url_verification"."""
    if content_type == "application/json":
        data = json.loads(body)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return ("url_verification" if data.get("type") == "url_verification" else "events_api"), data
    form = dict(parse_qsl(body.decode(), keep_blank_values=True))
    if "payload" in form:
        payload = json.loads(form["payload"])
        if not isinstance(payload, dict):
            raise ValueError("not an object")
        return "interactive", payload
    if "command" in form:
        return "slash_commands", form
    raise ValueError("neither an event, a command nor an interaction")


class EventsEndpoint:
    def __init__(self, verifier: Verifier, take_in: TakeIn, ready: Callable[[], bool]) -> None:
        self._verifier = verifier
        self._take_in = take_in
        self._ready = ready

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if (request.content_length or 0) > MAX_BODY:
            return web.Response(status=413)
        body = await request.read()
        try:
            self._verifier.check(body, request.headers.get("X-Slack-Request-Timestamp"),
                                 request.headers.get("X-Slack-Signature"), request.headers.get("X-Slack-Retry-Num", ""))
            kind, payload = decode(body, request.content_type)
        except Rejected as e:
            log.warning("slack: events request refused: %s", e)
            return web.Response(status=401, text="invalid request signature")
        except ValueError:  # UnicodeDecodeError too
            return web.Response(status=400, text="unreadable body")
        if kind == "url_verification":
            return web.json_response({"challenge": str(payload.get("challenge", ""))})
        if not self._ready():
            return web.Response(status=503)  # Slack retries later
        work = asyncio.ensure_future(self._take_in(kind, payload))
        work.add_done_callback(lambda done: done.cancelled() or done.exception())  # a late NotKept: Slack retried
        try:
            answer = await asyncio.wait_for(asyncio.shield(work), ACK_WITHIN)
        except TimeoutError:
            log.warning("slack: %s not in the inbox within %.1fs; Slack will retry", kind, ACK_WITHIN)
            return web.Response(status=503)
        except NotKept:
            log.warning("slack: %s not kept; Slack will retry", kind)
            return web.Response(status=503)
        return web.json_response(answer) if answer else web.Response(status=200)
