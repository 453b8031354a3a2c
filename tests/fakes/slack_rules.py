"""What the fake Slack enforces, with Slack's published values: message and Block Kit limits, method tiers
and the 1-message-per-second-per-channel rule; and how a request to the Web API is read (JSON, form, query).
"""

from __future__ import annotations

import json
import math
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from tests.fakes.budgets import SlidingWindows

BOT_TOKEN, APP_TOKEN = "xoxb-fake-bot", "xapp-fake-app"  # obviously not Slack's
TEAM_ID, APP_ID, BOT_USER_ID, BOT_ID = "T0FAKE", "A0FAKE", "U0BOT", "B0BOT"
MAX_TEXT = 40_000  # chat.postMessage refuses longer text (msg_too_long)
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_BUTTON_TEXT = 75
MAX_ACTION_ID = 255
MAX_BUTTON_VALUE = 2000
MAX_ACTIONS = 25
MAX_MARKDOWN_TEXT = 12_000  # a streamed message's markdown_text, in total
MAX_CONTEXT_ACTIONS = 5  # elements of a context_actions block
MAX_LABEL = 75  # a feedback button's text and accessibility label
BLOCK_TYPES = frozenset({"section", "actions", "header", "context", "divider", "rich_text", "markdown",
                         "context_actions"})

# Web API tiers: calls per minute per method per workspace (Tier 1 … 4, "1+ … 100+": Slack tolerates short
# bursts; Tier 1 is held at a few, enough for a restart or a refresh); chat.postMessage and starting a stream
# have the per-channel rule instead (below).
TIER_PER_MINUTE = {1: 5, 2: 20, 3: 50, 4: 100}
TIERS = {
    "auth.test": 4, "apps.connections.open": 1, "chat.update": 3, "chat.delete": 3, "chat.appendStream": 4,
    "chat.stopStream": 3, "assistant.threads.setStatus": 3, "assistant.threads.setSuggestedPrompts": 3,
    "assistant.threads.setTitle": 3, "files.info": 4, "files.getUploadURLExternal": 4,
    "files.completeUploadExternal": 4, "conversations.info": 3,
}
PER_CHANNEL = frozenset({"chat.postMessage", "chat.startStream"})
# "1 message per second per channel, short bursts allowed": at most 8 in any 5 seconds
CHANNEL_LIMIT, CHANNEL_WINDOW = 8, 5.0


@dataclass(frozen=True)
class SlackApp:
    """One app installed in the fake workspace: its bot token (xoxb-), app-level token (xapp-) and bot user.
    Slack counts every limit per app: each has its own tiers and per-channel budgets."""

    name: str
    bot_token: str
    app_token: str
    app_id: str
    bot_user: str
    bot_id: str


MAIN_APP = SlackApp("hub", BOT_TOKEN, APP_TOKEN, APP_ID, BOT_USER_ID, BOT_ID)
CALLER: ContextVar[SlackApp] = ContextVar("CALLER")  # the app whose Web API request is handled (one per task)


def second_app(name: str, n: int) -> SlackApp:
    """Another app of the same workspace, its ids and tokens as obviously fake as the first's."""
    return SlackApp(name, f"xoxb-fake-{name}", f"xapp-fake-{name}", f"A{n}FAKE", f"U{n}BOT", f"B{n}BOT")


@dataclass(frozen=True)
class Call:
    method: str
    params: dict[str, Any]
    token: str
    at: float = field(default_factory=time.monotonic)
    app: str = ""  # the calling app's id ("" when the token was no app's)


class ApiError(Exception):
    """An {"ok": false, "error": …} answer, with its HTTP status and headers."""

    def __init__(self, error: str, status: int = 200, headers: dict[str, str] | None = None) -> None:
        super().__init__(error)
        self.error, self.status, self.headers = error, status, headers or {}

    def response(self) -> web.Response:
        return web.json_response({"ok": False, "error": self.error}, status=self.status, headers=self.headers)


async def read_params(request: web.Request) -> dict[str, Any]:
    """The method's arguments as Slack reads them: query string, then a form or JSON body."""
    params: dict[str, Any] = dict(request.query)
    body = await request.read()
    if not body:
        return params
    kind = request.content_type
    if kind == "application/json":
        try:
            loaded = json.loads(body)
        except ValueError as e:
            raise ApiError("invalid_json") from e
        if not isinstance(loaded, dict):
            raise ApiError("invalid_json")
        params.update(loaded)
    elif kind == "application/x-www-form-urlencoded":
        params.update(parse_qsl(body.decode(), keep_blank_values=True))
    return params


def json_field(params: dict[str, Any], name: str) -> Any:
    """A structured argument, sent as JSON or as a JSON string in a form (blocks, files)."""
    value = params.get(name)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as e:
            raise ApiError(f"invalid_{name}") from e
    return value


def check_message(text: Any, blocks: Any) -> None:
    """What chat.postMessage / chat.update refuse: no content, over-long text, malformed Block Kit."""
    if text is not None and not isinstance(text, str):
        raise ApiError("invalid_arguments")
    if not text and not blocks:
        raise ApiError("no_text")
    if text and len(text) > MAX_TEXT:
        raise ApiError("msg_too_long")
    if blocks:
        check_blocks(blocks)


def check_markdown(text: str) -> None:
    """A stream's markdown_text, all of it so far."""
    if len(text) > MAX_MARKDOWN_TEXT:
        raise ApiError("msg_too_long")


def check_blocks(blocks: Any) -> None:
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        raise ApiError("invalid_blocks")
    block_ids: set[str] = set()
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") not in BLOCK_TYPES:
            raise ApiError("invalid_blocks")
        block_id = block.get("block_id")
        if block_id is not None:
            if block_id in block_ids or len(str(block_id)) > 255:
                raise ApiError("invalid_blocks")
            block_ids.add(block_id)
        _check_block(block)


def _check_block(block: dict[str, Any]) -> None:
    kind = block["type"]
    if kind == "section":
        _text_object(block.get("text"), MAX_SECTION_TEXT)
    elif kind == "header":
        _text_object(block.get("text"), MAX_HEADER_TEXT, plain=True)
    elif kind == "markdown":
        if not isinstance(block.get("text"), str) or len(block["text"]) > MAX_MARKDOWN_TEXT:
            raise ApiError("invalid_blocks")
    elif kind == "actions":
        elements = block.get("elements")
        if not isinstance(elements, list) or not 0 < len(elements) <= MAX_ACTIONS:
            raise ApiError("invalid_blocks")
        action_ids: set[str] = set()
        for element in elements:
            _check_button(element, action_ids)
    elif kind == "context":
        elements = block.get("elements")
        if not isinstance(elements, list) or not 0 < len(elements) <= 10:
            raise ApiError("invalid_blocks")
        for element in elements:
            _text_object(element, MAX_SECTION_TEXT)
    elif kind == "context_actions":
        _check_context_actions(block)


def _check_context_actions(block: dict[str, Any]) -> None:
    """As Slack documents it: 1-5 elements, each feedback_buttons (a positive and a negative button, each with
    plain text and a value) or icon_button; nothing else."""
    elements = block.get("elements")
    if set(block) - {"type", "block_id", "elements"} or not isinstance(elements, list):
        raise ApiError("invalid_blocks")
    if not 0 < len(elements) <= MAX_CONTEXT_ACTIONS:
        raise ApiError("invalid_blocks")
    action_ids: set[str] = set()
    for element in elements:
        kind = element.get("type") if isinstance(element, dict) else None
        if kind == "feedback_buttons":
            if set(element) - {"type", "action_id", "positive_button", "negative_button"}:
                raise ApiError("invalid_blocks")
            _feedback_button(element.get("positive_button"))
            _feedback_button(element.get("negative_button"))
        elif kind == "icon_button":
            if not isinstance(element.get("icon"), str):
                raise ApiError("invalid_blocks")
            _text_object(element.get("text"), MAX_BUTTON_TEXT, plain=True)
        else:
            raise ApiError("invalid_blocks")
        action_id = element.get("action_id")
        if action_id is not None:
            if not isinstance(action_id, str) or len(action_id) > MAX_ACTION_ID or action_id in action_ids:
                raise ApiError("invalid_blocks")
            action_ids.add(action_id)


def _feedback_button(button: Any) -> None:
    if not isinstance(button, dict) or set(button) - {"text", "value", "accessibility_label"}:
        raise ApiError("invalid_blocks")
    _text_object(button.get("text"), MAX_LABEL, plain=True)
    value, label = button.get("value"), button.get("accessibility_label", "x")
    if not isinstance(value, str) or not value or len(value) > MAX_BUTTON_VALUE:
        raise ApiError("invalid_blocks")
    if not isinstance(label, str) or not label or len(label) > MAX_LABEL:
        raise ApiError("invalid_blocks")


def _check_button(element: Any, action_ids: set[str]) -> None:
    if not isinstance(element, dict) or element.get("type") != "button":
        raise ApiError("invalid_blocks")
    _text_object(element.get("text"), MAX_BUTTON_TEXT, plain=True)
    action_id = element.get("action_id")
    if not isinstance(action_id, str) or len(action_id) > MAX_ACTION_ID or action_id in action_ids:
        raise ApiError("invalid_blocks")  # action ids must be unique within the block
    action_ids.add(action_id)
    value = element.get("value", "")
    if not isinstance(value, str) or len(value) > MAX_BUTTON_VALUE:
        raise ApiError("invalid_blocks")


def _text_object(obj: Any, limit: int, *, plain: bool = False) -> None:
    kinds = ("plain_text",) if plain else ("plain_text", "mrkdwn")
    if not isinstance(obj, dict) or obj.get("type") not in kinds:
        raise ApiError("invalid_blocks")
    text = obj.get("text")
    if not isinstance(text, str) or not text or len(text) > limit:
        raise ApiError("invalid_blocks")


class RateLimits:
    """Slack's limits: tiers per method and workspace, the per-channel message rule. `over` names the rule
    a call breaks (None: within every limit); the refused call does not count."""

    def __init__(self) -> None:
        self._methods = {m: SlidingWindows(TIER_PER_MINUTE[t], 60.0) for m, t in TIERS.items()}
        self._channels = SlidingWindows(CHANNEL_LIMIT, CHANNEL_WINDOW)

    def over(self, method: str, params: dict[str, Any], app: str = "") -> str | None:
        if method in PER_CHANNEL:
            return "per channel" if self._channels.over(f"{app}:{params.get('channel', '')}") else None
        window = self._methods.get(method)
        return f"tier {TIERS[method]}" if window is not None and window.over(app) else None

    def refusal(self, method: str, params: dict[str, Any], app: str = "") -> ApiError | None:
        """The 429 for a call over a limit, with the Retry-After Slack gives: whole seconds until there is room."""
        if self.over(method, params, app) is None:
            return None
        window = self._channels if method in PER_CHANNEL else self._methods[method]
        target = f"{app}:{params.get('channel', '')}" if method in PER_CHANNEL else app
        return retry_after(max(1, math.ceil(window.free_in(target))))


def retry_after(seconds: int) -> ApiError:
    return ApiError("ratelimited", status=429, headers={"Retry-After": str(seconds)})
