"""Fake Feishu/Lark Open Platform on 127.0.0.1 port 0, strict where the real one is.

REST: tenant token, bot/v3/info, im/v1 messages (create, reply, PATCH card, PUT text), chats, CardKit
(feishu_cardkit.py). Errors are data (`{"code": n, "msg": ...}`), as on the real platform; cards are
validated like JSON 2.0 (feishu_cards.py) and a refusal is recorded in `card_errors`; a rate-limit answer
carries the x-ogw-ratelimit-* headers. Every request is recorded. Also: the long connection (feishu_ws.py).
Webhook events are built in feishu_events.py.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.budgets import Judged
from tests.fakes.feishu_cardkit import TOO_LONG, CardEntity, CardKit, error, ok
from tests.fakes.feishu_cards import walk
from tests.fakes.feishu_events import APP_ID, message_event
from tests.fakes.feishu_files import ResourceFiles
from tests.fakes.feishu_limits import FeishuLimits
from tests.fakes.feishu_ws import LongConnectionGateway
from tests.fakes.serve import serve_local

APP_SECRET = "test-secret"
BOT_OPEN_ID = "ou_bot"
TEXT_LIMIT = 150 * 1024
RATE_LIMITED = 99991400  # "request trigger frequency limit", HTTP 429 with x-ogw-ratelimit-* headers
NOT_UPDATABLE = 230099  # this fake's code for "card message cannot be updated"


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]


@dataclass
class Failure:
    method: str
    path_part: str
    code: int
    status: int
    times: int | None  # None: every time
    reset: int = 1  # seconds in x-ogw-ratelimit-reset when the failure is a rate limit


class FakeFeishu(ResourceFiles, CardKit, Judged, LongConnectionGateway):
    def __init__(self, app_id: str = APP_ID, app_secret: str = APP_SECRET, open_id: str = BOT_OPEN_ID,
                 name: str = "Hub") -> None:
        """The app's id, secret and bot (another app beside the default, for a cloud)."""
        self.app_id, self.app_secret, self.open_id, self.name = app_id, app_secret, open_id, name
        ResourceFiles.__init__(self)
        CardKit.__init__(self)
        Judged.__init__(self)
        LongConnectionGateway.__init__(self)
        self.judge = FeishuLimits()  # Feishu's frequency limits, only recorded (budgets.py)
        self.calls: list[Call] = []
        self.messages: dict[str, dict[str, Any]] = {}
        self.chat_modes: dict[str, str] = {}  # chat_id → "p2p" | "group" | "topic"
        self.token_gate: asyncio.Event | None = None  # when set to an Event, token requests wait for it
        self.token_expire = 7200
        self._failures: list[Failure] = []
        self._raw: list[tuple[str, str, web.Response]] = []  # (method, path part, answer): answered once, as is
        self._valid_tokens: set[str] = set()
        self.issued_tokens: list[str] = []
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def domain(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/open-apis/auth/v3/tenant_access_token/internal", self._token)
        app.router.add_post("/callback/ws/endpoint", self._ws_endpoint)
        app.router.add_get("/ws", self._ws_handler)
        app.router.add_route("*", "/open-apis/{tail:.*}", self._api)
        self._runner, self.port = await serve_local(app)

    async def stop(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    # ---- test controls ------------------------------------------------------------------------
    def fail(self, method: str, path_part: str, code: int, status: int = 400, times: int | None = 1,
             reset: int = 1) -> None:
        """Answer matching requests with an error code (RATE_LIMITED + status 429 for a rate limit)."""
        self._failures.append(Failure(method, path_part, code, status, times, reset))

    def answer_raw(self, method: str, path_part: str, text: str, status: int = 200,
                   content_type: str = "application/json") -> None:
        """The next matching request gets exactly this body (a proxy's HTML page, malformed JSON...)."""
        self._raw.append((method, path_part, web.Response(status=status, text=text, content_type=content_type)))

    def expire_tokens(self) -> None:
        """Every issued token becomes invalid (code 99991663), as after the platform rotates it."""
        self._valid_tokens.clear()

    def requests(self, method: str | None = None, path_part: str = "") -> list[Call]:
        return [c for c in self.calls if (method is None or c.method == method) and path_part in c.path]

    def incoming(self, event_id: str, **kwargs: Any) -> dict[str, Any]:
        """A user's message event (see `message_event`) the platform also knows, so replies find its chat."""
        return self.record_incoming(message_event(event_id, **kwargs))

    def record_incoming(self, event: dict[str, Any]) -> dict[str, Any]:
        """Make the user's message of a (recorded) message event known, as the platform would."""
        message = event["event"]["message"]
        self.messages[message["message_id"]] = {
            "msg_type": message["message_type"], "content": message["content"], "chat_id": message["chat_id"],
            "reply_to": "", "in_thread": bool(message["thread_id"]), "update_multi": False, "updates": 0,
            "from_user": True,
        }
        return event

    def shown(self, chat_id: str) -> list[str]:
        """What the bot's messages in a chat show now (card Markdown or text), oldest first."""
        return [_visible_text(m, self.cards) for m in self.messages.values()
                if m["chat_id"] == chat_id and not m.get("from_user")]

    # ---- REST ---------------------------------------------------------------------------------
    _ok = staticmethod(ok)
    _error = staticmethod(error)

    async def _token(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.calls.append(Call("POST", request.path, dict(request.query), body, dict(request.headers)))
        if self.token_gate is not None:
            await self.token_gate.wait()
        if (body.get("app_id"), body.get("app_secret")) != (self.app_id, self.app_secret):
            return self._error(10014, "app secret invalid")
        token = f"t-{self.app_id}-{next(self._ids)}"
        self._valid_tokens.add(token)
        self.issued_tokens.append(token)
        return web.json_response({"code": 0, "msg": "ok", "tenant_access_token": token, "expire": self.token_expire})

    async def _api(self, request: web.Request) -> web.Response:
        body = await self.read_body(request)
        self.calls.append(Call(request.method, request.path, dict(request.query), body, dict(request.headers)))
        if request.headers.get("Authorization", "").removeprefix("Bearer ") not in self._valid_tokens:
            return self._error(99991663, "Invalid access token for authorization.")
        self._judge(request.method, request.path.removeprefix("/open-apis/").split("/"), body)
        for raw in self._raw:
            if raw[0] == request.method and raw[1] in request.path:
                self._raw.remove(raw)
                return raw[2]
        for failure in self._failures:
            if failure.method == request.method and failure.path_part in request.path:
                if failure.times is not None:
                    failure.times -= 1
                    if failure.times <= 0:
                        self._failures.remove(failure)
                limited = failure.code == RATE_LIMITED
                return self._error(failure.code, "request trigger frequency limit" if limited else "injected failure",
                                   failure.status, failure.reset if limited else None)
        p = request.path.removeprefix("/open-apis/").split("/")
        route = (request.method, *p[:3], len(p))
        if route == ("GET", "bot", "v3", "info", 3):
            return web.json_response({"code": 0, "msg": "ok", "bot": {"open_id": self.open_id, "app_name": self.name}})
        if route[:4] == ("GET", "im", "v1", "chats"):
            return self._ok({"chat_id": p[3], "chat_mode": self.chat_modes.get(p[3], "group")})
        if route[:3] == ("POST", "im", "v1") and p[2] in ("images", "files") and len(p) == 3:
            return self.upload(p[2], body)
        if route[:4] == ("GET", "im", "v1", "messages") and len(p) == 6 and p[4] == "resources":
            return self.resource(p[3], p[5], dict(request.query))
        if route[1:4] == ("im", "v1", "messages"):
            return self._messages(request.method, p, dict(request.query), body or {})
        if route[1:4] == ("cardkit", "v1", "cards"):
            return self._cardkit(request.method, p, body or {})
        return self._error(404, "not found", 404)

    def _judge(self, method: str, parts: list[str], body: Any) -> None:
        """Count a message or card call against Feishu's limits; reads (GET) are not limited."""
        if method == "GET" or parts[:2] not in (["im", "v1"], ["cardkit", "v1"]) or parts[2] in ("images", "files"):
            return
        if parts[0] == "cardkit":  # id_convert names a message, not a card: only the app's limit
            api, target = "cardkit", parts[3] if len(parts) > 3 and parts[3] != "id_convert" else None
        elif method == "POST" and len(parts) == 3:
            api, target = "send", (body or {}).get("receive_id")
        elif method == "POST" and parts[-1] == "reply":
            api, target = "send", self.messages.get(parts[3], {}).get("chat_id")
        else:
            api, target = "update", parts[3] if len(parts) > 3 else None
        if (rule := self.judge.refusal(api, target)) is not None:
            self.breach(rule, target)

    def _messages(self, method: str, p: list[str], query: dict[str, str], body: dict[str, Any]) -> web.Response:
        if method == "POST" and len(p) == 3:
            if query.get("receive_id_type") not in ("chat_id", "open_id", "user_id", "union_id", "email"):
                return self._error(99992402, "field validation failed: receive_id_type")
            if not body.get("receive_id"):
                return self._error(99992402, "field validation failed: receive_id")
            return self._new_message(body, body["receive_id"], reply_to="", in_thread=False)
        if method == "POST" and len(p) == 5 and p[4] == "reply":
            if not p[3].startswith("om_"):
                return self._error(230001, "invalid message_id")
            parent = self.messages.get(p[3], {})
            return self._new_message(body, parent.get("chat_id", ""), p[3], bool(body.get("reply_in_thread")))
        message = self.messages.get(p[3]) if len(p) == 4 else None
        if message is None:
            return self._error(230001, "message not found")
        if method == "PATCH":
            if message["msg_type"] != "interactive" or not message.get("update_multi"):
                return self._error(NOT_UPDATABLE, "only cards with config.update_multi can be updated")
            error = self._check_card(body.get("content", ""))
            if error is not None:
                return error
            message["content"] = body["content"]
            message["updates"] += 1
            return self._ok()
        if method == "PUT":
            if message["msg_type"] != "text" or body.get("msg_type") != "text":
                return self._error(230001, "only text messages can be edited here")
            message["content"] = body.get("content", "")
            message["updates"] += 1
            return self._ok()
        return self._error(404, "not found", 404)

    def _new_message(self, body: dict[str, Any], chat_id: str, reply_to: str, in_thread: bool) -> web.Response:
        msg_type, content = body.get("msg_type"), body.get("content", "")
        if msg_type not in ("text", "post", "interactive", "image", "file", "audio"):
            return self._error(230001, f"invalid msg_type {msg_type!r}")
        if not isinstance(content, str):
            return self._error(99992402, "content must be a JSON string")
        update_multi = False
        if msg_type in ("image", "file", "audio") and not self.known_key(msg_type, content):
            return self._error(230001, f"{msg_type} message without a key this app uploaded")
        if msg_type == "text":
            if len(content.encode()) > TEXT_LIMIT:
                return self._error(TOO_LONG, "message content too long")
        elif msg_type == "interactive":
            error = self._check_card(content)
            if error is not None:
                return error
            parsed = json.loads(content)
            if parsed.get("type") == "card":
                entity = self.cards[parsed["data"]["card_id"]]
                entity.sent = True
                update_multi = True
            else:
                update_multi = bool(parsed.get("config", {}).get("update_multi"))
        message_id = f"om_out_{next(self._ids)}"
        self.messages[message_id] = {
            "msg_type": msg_type, "content": content, "chat_id": chat_id, "reply_to": reply_to,
            "in_thread": in_thread, "update_multi": update_multi, "updates": 0,
        }
        return self._ok({"message_id": message_id, "chat_id": chat_id, "msg_type": msg_type,
                         "create_time": str(int(time.time() * 1000)), "body": {"content": content}})

    def record_endpoint_call(self, request: web.Request, body: Any) -> None:
        self.calls.append(Call("POST", request.path, {}, body, dict(request.headers)))


def _visible_text(message: dict[str, Any], cards: dict[str, CardEntity]) -> str:
    content = json.loads(message["content"])
    if message["msg_type"] == "text":
        return str(content["text"])
    if message["msg_type"] in ("image", "file", "audio"):
        return ""
    if content.get("type") == "card":
        content = cards[content["data"]["card_id"]].card
    return "\n".join(str(e.get("content", "")) for e in walk(content["body"]["elements"])
                     if isinstance(e, dict) and e.get("tag") == "markdown")

