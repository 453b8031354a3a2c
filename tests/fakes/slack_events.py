"""Events API delivery as Slack makes it: a JSON event_callback (or a form-encoded slash command or
interaction) POSTed to the app's request URL, signed with the signing secret — `X-Slack-Signature:
v0=HMAC-SHA256(secret, "v0:{timestamp}:{body}")` and `X-Slack-Request-Timestamp` — and retried with
`X-Slack-Retry-Num` when the app did not answer 200 within 3 seconds.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp

from tests.fakes.slack_rules import APP_ID, TEAM_ID

_event_ids = itertools.count(1)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def event_callback(event: dict[str, Any], event_id: str | None = None, app_id: str = APP_ID) -> dict[str, Any]:
    return {"token": "deprecated-verification-token", "team_id": TEAM_ID, "api_app_id": app_id, "event": event,
            "type": "event_callback", "event_id": event_id or f"Ev{next(_event_ids):08d}",
            "event_time": int(time.time())}


@dataclass(frozen=True)
class Answer:
    status: int
    body: str
    took: float  # seconds until the app answered


class EventsPoster:
    """POSTs signed requests to the app's Events API URL; every answer is kept."""

    def __init__(self, url: str, secret: str) -> None:
        self.url, self.secret = url, secret
        self.answers: list[Answer] = []
        self._http = aiohttp.ClientSession()

    async def close(self) -> None:
        await self._http.close()

    async def event(self, payload: dict[str, Any], *, retry: int = 0) -> Answer:
        return await self.post(json.dumps(payload).encode(), "application/json", retry=retry)

    async def command(self, form: dict[str, str]) -> Answer:
        return await self.post(urlencode(form).encode(), "application/x-www-form-urlencoded")

    async def interaction(self, payload: dict[str, Any]) -> Answer:
        return await self.post(urlencode({"payload": json.dumps(payload)}).encode(),
                               "application/x-www-form-urlencoded")

    async def post(self, body: bytes, content_type: str, *, retry: int = 0, timestamp: str | None = None,
                   signed: str | None = None) -> Answer:
        """`signed`: the X-Slack-Signature to send instead of the right one ("" sends an empty header)."""
        stamp = timestamp if timestamp is not None else str(int(time.time()))
        headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": stamp,
                   "X-Slack-Signature": signature(self.secret, stamp, body) if signed is None else signed}
        if retry:
            headers.update({"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"})
        started = time.monotonic()
        async with self._http.post(self.url, data=body, headers=headers) as resp:
            answer = Answer(resp.status, await resp.text(), time.monotonic() - started)
        self.answers.append(answer)
        return answer

    async def unsigned(self, payload: dict[str, Any]) -> Answer:
        body = json.dumps(payload).encode()
        async with self._http.post(self.url, data=body, headers={"Content-Type": "application/json"}) as resp:
            return Answer(resp.status, await resp.text(), 0.0)
