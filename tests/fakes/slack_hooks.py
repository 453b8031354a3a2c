"""response_url on the fake Slack: each slash command and button press carries a URL that posts into its
channel whether or not the app is a member — at most 5 times, for 30 minutes — as the app, visible to all
("in_channel") or only to the person ("ephemeral"), or replaces the message it belongs to
(`replace_original`). What Slack refuses, this refuses: a used-up or expired URL (404), a malformed message."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiohttp import web

from tests.fakes.slack_rules import MAIN_APP, ApiError, SlackApp, check_message

USES, VALID = 5, 30 * 60.0


class _Message(Protocol):
    ts: str
    text: str
    blocks: list[dict[str, Any]] | None


@dataclass
class Hook:
    channel: str
    app: SlackApp
    original: str | None  # the ts of the message a press was on (what replace_original replaces)
    given: float = field(default_factory=time.monotonic)
    posted: list[dict[str, Any]] = field(default_factory=list)  # every body sent to it


class ResponseUrls:
    port: int
    post_as: Callable[[str, SlackApp, str, Any], _Message]  # FakeSlack's: the app's message, posted by Slack
    find_in: Callable[[str, str], _Message | None]

    def __init__(self) -> None:
        self.hooks: dict[str, Hook] = {}
        self._hook_ids = itertools.count(1)

    def add_hook_routes(self, app: web.Application) -> None:
        app.router.add_post("/hooks/{id}", self._respond)

    def response_url(self, channel: str, app: SlackApp = MAIN_APP, original: str | None = None) -> str:
        hook = f"H{next(self._hook_ids):06d}"
        self.hooks[hook] = Hook(channel, app, original)
        return f"http://127.0.0.1:{self.port}/hooks/{hook}"

    async def _respond(self, request: web.Request) -> web.StreamResponse:
        hook = self.hooks.get(request.match_info["id"])
        if hook is None or time.monotonic() - hook.given > VALID:
            return web.Response(status=404, text="expired_url")
        if len(hook.posted) >= USES:
            return web.Response(status=404, text="used_url")
        try:
            body = json.loads(await request.read())
            if not isinstance(body, dict) or body.get("response_type", "ephemeral") not in ("in_channel", "ephemeral"):
                raise ApiError("invalid_payload")
            check_message(body.get("text"), body.get("blocks"))
        except (ValueError, ApiError):
            return web.Response(status=400, text="invalid_payload")
        hook.posted.append(body)
        text, blocks = str(body.get("text") or ""), body.get("blocks")
        replaced = self.find_in(hook.channel, hook.original) if body.get("replace_original") and hook.original else None
        if replaced is not None:
            replaced.text, replaced.blocks = text, blocks
        elif body.get("response_type") == "in_channel":
            hook.original = self.post_as(hook.channel, hook.app, text, blocks).ts  # a later replace replaces it
        return web.Response(text="ok")
