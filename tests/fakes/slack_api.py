"""A fake Slack on 127.0.0.1 (aiohttp) that the real `slack_sdk` talks to through its `base_url`.

It speaks the Web API's wire format (POST /api/<method>, JSON or form bodies, bearer tokens, {"ok": …}
answers, 429 with Retry-After), is strict like Slack (token types, message and Block Kit limits, streams that
must be open, assistant methods only in DMs), records every call with its time, and shows each channel as
its members see it now. Socket Mode (slack_socket.py) and files (slack_files.py) are mixed in; Events API
deliveries are signed by slack_events.py.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.budgets import Judged
from tests.fakes.serve import serve_local
from tests.fakes.slack_files import FileMethods
from tests.fakes.slack_hooks import ResponseUrls
from tests.fakes.slack_rules import (
    CALLER,
    MAIN_APP,
    TEAM_ID,
    ApiError,
    Call,
    RateLimits,
    SlackApp,
    check_blocks,
    check_markdown,
    check_message,
    json_field,
    read_params,
    retry_after,
)
from tests.fakes.slack_socket import SocketMode

SCOPES = ("app_mentions:read", "assistant:write", "channels:history", "chat:write", "commands", "files:read",
          "files:write", "groups:history", "im:history", "im:read", "im:write", "mpim:history")
APP_METHODS = frozenset({"apps.connections.open"})  # the only methods an app-level token may call


@dataclass
class Posted:
    """A message as the channel shows it."""

    ts: str
    user: str
    text: str
    blocks: list[dict[str, Any]] | None
    thread_ts: str | None
    streaming: bool = False


class FakeSlack(SocketMode, FileMethods, ResponseUrls, Judged):
    def __init__(self, scopes: tuple[str, ...] = SCOPES) -> None:
        Judged.__init__(self)
        SocketMode.__init__(self)
        FileMethods.__init__(self)
        ResponseUrls.__init__(self)
        self.scopes = scopes
        self.apps: dict[str, SlackApp] = {MAIN_APP.app_id: MAIN_APP}  # every app installed, by id
        self.calls: list[Call] = []
        self.refused: list[Call] = []  # calls answered 429 because they went over a limit
        self.limits: RateLimits | None = RateLimits()  # enforced (429); None only where a test says why
        self.judge = RateLimits()  # the same limits, only recorded: a breach fails the test (budgets.py)
        self.channels: dict[str, str] = {}  # id → "im" | "channel" | "group" | "mpim"
        self.messages: dict[str, list[Posted]] = {}
        self.statuses: list[tuple[str, str, str]] = []  # (channel, thread_ts, status) as set
        self.prompts: dict[tuple[str, str], list[dict[str, str]]] = {}
        self.titles: dict[tuple[str, str], str] = {}
        self.streams_supported = True
        self.port = 0
        self._gone: set[str] = set()
        self._failures: list[tuple[str, Callable[[], ApiError]]] = []
        self._clock = itertools.count(1)
        self._runner: web.AppRunner | None = None

    # ---- lifecycle ------------------------------------------------------------------------------
    @property
    def api_base(self) -> str:
        """What SLACK_API_BASE / slack.api_base should be set to (slack_sdk wants the trailing slash)."""
        return f"http://127.0.0.1:{self.port}/api/"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle)
        self.add_file_routes(app)
        self.add_socket_routes(app)
        self.add_hook_routes(app)
        self._runner, self.port = await serve_local(app, handler_cancellation=True)

    async def stop(self) -> None:
        await self.close_sockets()
        if self._runner:
            await self._runner.cleanup()

    # ---- test controls --------------------------------------------------------------------------
    def add_app(self, app: SlackApp) -> None:
        """Install another app in the workspace: its own tokens, bot user, limits and Socket Mode link."""
        self.apps[app.app_id] = app

    def open_channel(self, channel: str, kind: str) -> None:
        self.channels.setdefault(channel, kind)
        self.messages.setdefault(channel, [])

    def user_message(self, channel: str, text: str, user: str, thread_ts: str | None = None) -> str:
        """A person's message in the channel (as the events delivering it say); its ts."""
        ts = self._next_ts()
        self.messages.setdefault(channel, []).append(Posted(ts, user, text, None, thread_ts))
        return ts

    def gone(self, channel: str) -> None:
        """The app was removed from the channel: posting there fails with channel_not_found."""
        self._gone.add(channel)

    def rate_limit(self, method: str, times: int = 1, seconds: int = 1) -> None:
        for _ in range(times):
            self._failures.append((method, lambda: retry_after(seconds)))

    def fail(self, method: str, error: str) -> None:
        self._failures.append((method, lambda: ApiError(error)))

    def calls_of(self, method: str, app: SlackApp | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == method and (app is None or c.app == app.app_id)]

    def calls_in(self, channel: str, methods: frozenset[str], app: SlackApp = MAIN_APP) -> list[Call]:
        """The app's calls of these methods into the channel, oldest first."""
        return [c for c in self.calls
                if c.method in methods and c.app == app.app_id and c.params.get("channel") == channel]

    def settled(self, channel: str, app: SlackApp = MAIN_APP) -> bool:
        """No message of the app in the channel is still streaming."""
        return not any(m.streaming for m in self.messages.get(channel, ()) if m.user == app.bot_user)

    def shown(self, channel: str, thread_ts: str | None = None, app: SlackApp = MAIN_APP) -> list[str]:
        """The app's messages in the channel (or one thread of it), oldest first, as they read now."""
        return [m.text for m in self.messages.get(channel, ())
                if m.user == app.bot_user and m.thread_ts == thread_ts]

    def message(self, channel: str, ts: str) -> Posted:
        return next(m for m in self.messages.get(channel, ()) if m.ts == ts)

    def post_as(self, channel: str, app: SlackApp, text: str, blocks: Any) -> Posted:
        """A message of the app's posted by Slack itself (through a response_url)."""
        posted = Posted(self._next_ts(), app.bot_user, text, blocks, None)
        self.messages.setdefault(channel, []).append(posted)
        return posted

    def find_in(self, channel: str, ts: str) -> Posted | None:
        return next((m for m in self.messages.get(channel, ()) if m.ts == ts), None)

    # ---- the Web API ----------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        try:
            params = await read_params(request)
            token = self._token(request, params)
            app = self._app_of(token)
            self.calls.append(Call(method, params, token, app=app.app_id if app else ""))
            self._check_token(method, token, app)
            assert app is not None
            CALLER.set(app)
            for i, (failing, make) in enumerate(self._failures):
                if failing == method:
                    del self._failures[i]
                    raise make()
            if (rule := self.judge.over(method, params, app.app_id)) is not None:
                self.breach(f"{method} {rule}", f"{app.name} {params.get('channel', '')}")
            if self.limits is not None and (refused := self.limits.refusal(method, params, app.app_id)) is not None:
                self.refused.append(self.calls[-1])
                raise refused
            handler = getattr(self, "m_" + method.replace(".", "_"), None)
            if handler is None:
                raise ApiError("unknown_method")
            answer: dict[str, Any] = await handler(params) if asyncio.iscoroutinefunction(handler) else handler(params)
        except ApiError as e:
            return e.response()
        headers = {"X-OAuth-Scopes": ",".join(self.scopes)} if method == "auth.test" else {}
        return web.json_response({"ok": True, **answer}, headers=headers)

    @staticmethod
    def _token(request: web.Request, params: dict[str, Any]) -> str:
        header = request.headers.get("Authorization", "")
        return header[len("Bearer "):] if header.startswith("Bearer ") else str(params.get("token", ""))

    def _app_of(self, token: str) -> SlackApp | None:
        return next((a for a in self.apps.values() if token in (a.bot_token, a.app_token)), None)

    @staticmethod
    def _check_token(method: str, token: str, app: SlackApp | None) -> None:
        if not token:
            raise ApiError("not_authed")
        if app is None:
            raise ApiError("invalid_auth")
        if (token == app.app_token) != (method in APP_METHODS):
            raise ApiError("not_allowed_token_type")

    def _next_ts(self) -> str:
        return f"1700000000.{next(self._clock):06d}"

    def _channel(self, params: dict[str, Any], key: str = "channel") -> str:
        channel = str(params.get(key) or "")
        if not channel:
            raise ApiError("channel_not_found")
        if channel in self._gone:
            raise ApiError("channel_not_found")
        if channel not in self.channels:
            raise ApiError("not_in_channel")
        return channel

    def _find(self, channel: str, ts: Any) -> Posted:
        for posted in self.messages[channel]:
            if posted.ts == ts:
                return posted
        raise ApiError("message_not_found")

    def m_auth_test(self, _params: dict[str, Any]) -> dict[str, Any]:
        app = CALLER.get()
        return {"url": "https://fake.slack.invalid/", "team": "Fake Team", "user": app.name, "team_id": TEAM_ID,
                "user_id": app.bot_user, "bot_id": app.bot_id, "is_enterprise_install": False}

    def m_chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        text, blocks = params.get("text"), json_field(params, "blocks")
        check_message(text, blocks)
        thread_ts = params.get("thread_ts") or None
        if thread_ts is not None:
            self._find(channel, thread_ts)  # a reply needs its parent
        posted = Posted(self._next_ts(), CALLER.get().bot_user, text or "", blocks, thread_ts)
        self.messages[channel].append(posted)
        return {"channel": channel, "ts": posted.ts, "message": {"text": posted.text, "ts": posted.ts}}

    def m_chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        posted = self._find(channel, params.get("ts"))
        if posted.user != CALLER.get().bot_user:  # another app's, or a person's
            raise ApiError("cant_update_message")
        if posted.streaming:
            raise ApiError("cant_update_message")  # a stream is finished by chat.stopStream first
        text, blocks = params.get("text"), json_field(params, "blocks")
        check_message(text, blocks)
        posted.text, posted.blocks = text or "", blocks
        return {"channel": channel, "ts": posted.ts, "text": posted.text}

    def m_chat_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        posted = self._find(channel, params.get("ts"))
        if posted.user != CALLER.get().bot_user:  # another app's, or a person's
            raise ApiError("cant_delete_message")
        self.messages[channel].remove(posted)
        return {"channel": channel, "ts": posted.ts}

    # ---- streaming --------------------------------------------------------------------------------
    def m_chat_startStream(self, params: dict[str, Any]) -> dict[str, Any]:
        if not self.streams_supported:
            raise ApiError("unknown_method")
        channel = self._channel(params)
        thread_ts = params.get("thread_ts")
        if not thread_ts:
            raise ApiError("invalid_arguments")  # a stream is always a reply in a thread
        self._find(channel, thread_ts)
        if self.channels[channel] != "im" and not (params.get("recipient_user_id") and params.get("recipient_team_id")):
            raise ApiError("invalid_arguments")  # in channels Slack must know whom the stream is for
        text = str(params.get("markdown_text") or "")
        posted = Posted(self._next_ts(), CALLER.get().bot_user, text, None, thread_ts, streaming=True)
        check_markdown(posted.text)
        self.messages[channel].append(posted)
        return {"channel": channel, "ts": posted.ts}

    def m_chat_appendStream(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, posted = self._open_stream(params)
        text = params.get("markdown_text")
        if not isinstance(text, str) or not text:
            raise ApiError("invalid_arguments")
        check_markdown(posted.text + text)
        posted.text += text
        return {"channel": channel, "ts": posted.ts}

    def m_chat_stopStream(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, posted = self._open_stream(params)
        text = str(params.get("markdown_text") or "")
        check_markdown(posted.text + text)
        blocks = json_field(params, "blocks")
        if blocks:
            check_blocks(blocks)
        posted.text, posted.blocks, posted.streaming = posted.text + text, blocks, False
        return {"channel": channel, "ts": posted.ts, "message": {"text": posted.text}}

    def _open_stream(self, params: dict[str, Any]) -> tuple[str, Posted]:
        channel = self._channel(params)
        posted = self._find(channel, params.get("ts"))
        if not posted.streaming or posted.user != CALLER.get().bot_user:
            raise ApiError("message_not_in_streaming_state")
        return channel, posted

    # ---- the assistant surface ------------------------------------------------------------------
    def _assistant_thread(self, params: dict[str, Any]) -> tuple[str, str]:
        channel = self._channel(params, "channel_id")
        if self.channels[channel] != "im":
            raise ApiError("channel_type_not_supported")  # assistant threads live in the app's DM
        thread_ts = str(params.get("thread_ts") or "")
        if not thread_ts:
            raise ApiError("invalid_arguments")
        return channel, thread_ts

    def m_assistant_threads_setStatus(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = self._assistant_thread(params)
        if not isinstance(params.get("status"), str):
            raise ApiError("invalid_arguments")
        self.statuses.append((channel, thread_ts, params["status"]))
        return {}

    def m_assistant_threads_setSuggestedPrompts(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = self._assistant_thread(params)
        prompts = json_field(params, "prompts")
        if (not isinstance(prompts, list) or not 0 < len(prompts) <= 4
                or not all(isinstance(p, dict) and p.get("title") and p.get("message") for p in prompts)):
            raise ApiError("invalid_arguments")
        self.prompts[(channel, thread_ts)] = prompts
        return {}

    def m_assistant_threads_setTitle(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = self._assistant_thread(params)
        title = params.get("title")
        if not isinstance(title, str) or not title.strip():
            raise ApiError("invalid_arguments")
        self.titles[(channel, thread_ts)] = title
        return {}
