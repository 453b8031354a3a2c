"""Fake DingTalk Open Platform on 127.0.0.1 port 0, strict where the real one is.

OpenAPI (`x-acs-dingtalk-access-token`): accessToken with an expiry, AI cards (createAndDeliver, whole-card
PUT, card/streaming), robot messages (oToMessages/batchSend, groupMessages/send), message file download;
the older API: media/upload (token in the query, errcode answers); session webhooks, which expire. Refusals
are HTTP 4xx with {"code", "message"} (OpenAPI) or {"errcode", "errmsg"}. Every call is recorded with its
time; DingTalk's limits are enforced and judged (budgets.py). The Stream gateway is dingtalk_gateway.py.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.budgets import Judged, SlidingWindows
from tests.fakes.dingtalk_gateway import Gateway
from tests.fakes.serve import serve_local

CLIENT_ID, CLIENT_SECRET = "ding-test-client", "ding-test-secret"
TEXT_LIMIT = 5000  # characters of Markdown per card or message (the adapter's MAX_CHARS must stay under it)
GROUP_PER_MINUTE = 20  # a robot's new messages into one group per minute
CARD_UPDATES_PER_SECOND = 10  # updates of one card (this fake's assumption; DingTalk publishes none)
APP_QPS = 20  # the app's OpenAPI calls per second
ROBOT_KEYS = frozenset({"sampleText", "sampleMarkdown", "sampleImageMsg", "sampleFile"})
WEBHOOK_EXPIRED = 300001  # this fake's errcode for a session webhook past its expiry


@dataclass
class Call:
    at: float
    method: str
    path: str
    body: Any
    headers: dict[str, str]


@dataclass
class Shown:
    """A bot message in a chat: a card (updatable) or a Markdown/text/file message."""

    chat_id: str
    kind: str
    params: dict[str, str] = field(default_factory=dict)
    text: str = ""

    @property
    def content(self) -> str:
        return self.params.get("msgContent", "") if self.kind == "card" else self.text


@dataclass
class Failure:
    path_part: str
    status: int
    code: str
    times: int | None


class FakeDingTalk(Gateway, Judged):
    def __init__(self) -> None:
        Gateway.__init__(self)
        Judged.__init__(self)
        self.client_id, self.client_secret = CLIENT_ID, CLIENT_SECRET
        self.calls: list[Call] = []
        self.cards: dict[str, Shown] = {}
        self.shown_messages: list[Shown] = []
        self.uploads: dict[str, tuple[str, bytes]] = {}
        self.files: dict[str, bytes] = {}  # download code → bytes
        self.webhooks: dict[str, tuple[str, float]] = {}  # session → (chat id, expiry ms)
        self.token_lifetime = 7200
        self.issued_tokens: list[str] = []
        self._tokens: dict[str, float] = {}  # token → expiry (monotonic)
        self._failures: list[Failure] = []
        self._ids = itertools.count(1)
        self._group_window = SlidingWindows(GROUP_PER_MINUTE, 60.0)
        self._group_judge = SlidingWindows(GROUP_PER_MINUTE, 60.0)
        self._card_judge = SlidingWindows(CARD_UPDATES_PER_SECOND, 1.0)
        self._app_judge = SlidingWindows(APP_QPS, 1.0)
        self._runner: web.AppRunner | None = None
        self.port = 0

    # ---- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> None:
        app = web.Application(client_max_size=30 * 2**20)
        self.gateway_routes(app)
        app.router.add_post("/v1.0/oauth2/accessToken", self._token)
        app.router.add_post("/robot/sendBySession", self._session_webhook)
        app.router.add_get("/files/{code}", self._file)
        app.router.add_post("/media/upload", self._upload)
        app.router.add_route("*", "/v1.0/{tail:.*}", self._openapi)
        self._runner, self.port = await serve_local(app)

    async def stop(self) -> None:
        await self.stop_gateway()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- scripting -------------------------------------------------------------------------------
    def fail(self, path_part: str, status: int, code: str, times: int | None = 1) -> None:
        self._failures.append(Failure(path_part, status, code, times))

    def expire_tokens(self) -> None:
        self._tokens.clear()

    def open_webhook(self, chat_id: str, lifetime_ms: int = 5_400_000) -> tuple[str, int]:
        session = f"sess-{next(self._ids)}"
        expires = int(time.time() * 1000) + lifetime_ms
        self.webhooks[session] = (chat_id, expires)
        return f"{self.base}/robot/sendBySession?session={session}", expires

    def robot_frame(self, data: dict[str, Any]) -> dict[str, Any]:
        """A robot message as DingTalk pushes it: with a fresh session webhook for its chat."""
        data = json.loads(json.dumps(data))
        chat = data["conversationId"] if str(data.get("conversationType")) == "2" else data["senderStaffId"]
        data["sessionWebhook"], data["sessionWebhookExpiredTime"] = self.open_webhook(chat)
        data["robotCode"] = data["chatbotUserId"] = CLIENT_ID
        return data

    def calls_to(self, path_part: str) -> list[Call]:
        return [c for c in self.calls if path_part in c.path]

    def shown(self, chat_id: str) -> list[str]:
        return [m.content for m in self.shown_messages if m.chat_id == chat_id]

    # ---- handlers --------------------------------------------------------------------------------
    def _record(self, request: web.Request, body: Any) -> None:
        self.calls.append(Call(time.monotonic(), request.method, request.path, body, dict(request.headers)))
        if self._app_judge.over():
            self.breach("app QPS", CLIENT_ID)

    def _scripted(self, path: str) -> web.Response | None:
        for failure in self._failures:
            if failure.path_part in path and failure.times != 0:
                if failure.times is not None:
                    failure.times -= 1
                headers = {"Retry-After": "1"} if failure.status == 429 else None
                return web.json_response({"code": failure.code, "message": "scripted refusal"},
                                         status=failure.status, headers=headers)
        return None

    async def _token(self, request: web.Request) -> web.Response:
        body = await request.json()
        self._record(request, body)
        if body.get("appKey") != CLIENT_ID or body.get("appSecret") != CLIENT_SECRET:
            return _refuse(400, "invalidClientIdOrSecret", "appKey or appSecret is wrong")
        token = f"at-{next(self._ids)}"
        self._tokens[token] = time.monotonic() + self.token_lifetime
        self.issued_tokens.append(token)
        return web.json_response({"accessToken": token, "expireIn": self.token_lifetime})

    def _authorized(self, token: str) -> bool:
        return self._tokens.get(token, 0.0) > time.monotonic()

    async def _openapi(self, request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body else None
        self._record(request, body)
        if not self._authorized(request.headers.get("x-acs-dingtalk-access-token", "")):
            return _refuse(401, "InvalidAuthentication", "access token is invalid or expired")
        scripted = self._scripted(request.path)
        if scripted is not None:
            return scripted
        route = (request.method, request.path)
        if not isinstance(body, dict):
            return _refuse(400, "InvalidParameter", "a JSON object body is required")
        if route == ("POST", "/v1.0/card/instances/createAndDeliver"):
            return self._create_card(body)
        if route == ("PUT", "/v1.0/card/instances"):
            return self._put_card(body)
        if route == ("PUT", "/v1.0/card/streaming"):
            return self._stream_card(body)
        if route in (("POST", "/v1.0/robot/oToMessages/batchSend"), ("POST", "/v1.0/robot/groupMessages/send")):
            return self._robot_send(body)
        if route == ("POST", "/v1.0/robot/messageFiles/download"):
            code = body.get("downloadCode")
            if body.get("robotCode") != CLIENT_ID or code not in self.files:
                return _refuse(400, "invalidDownloadCode", "download code is invalid")
            return web.json_response({"downloadUrl": f"{self.base}/files/{code}"})
        return _refuse(404, "NotFound", f"no such API {request.method} {request.path}")

    def _new_message(self, chat_id: str, is_group: bool) -> web.Response | None:
        """DingTalk's per-group budget for a robot's new messages; refused beyond it, and judged."""
        if is_group and self._group_judge.over(chat_id):
            self.breach("per group", chat_id)
        if is_group and self._group_window.over(chat_id):
            return _refuse(429, "Throttling", "robot send too fast, exceed 20 times per minute")
        return None

    def _create_card(self, body: dict[str, Any]) -> web.Response:
        space = str(body.get("openSpaceId", ""))
        kind, _, chat_id = space.removeprefix("dtv1.card//").partition(".")
        deliver = body.get("imGroupOpenDeliverModel" if kind == "IM_GROUP" else "imRobotOpenDeliverModel")
        params = body.get("cardData", {}).get("cardParamMap")
        track = body.get("outTrackId")
        if kind not in ("IM_GROUP", "IM_ROBOT") or not chat_id or not isinstance(deliver, dict):
            return _refuse(400, "param.openSpaceId.invalid", "openSpaceId or its deliver model is invalid")
        if deliver.get("robotCode") != CLIENT_ID or not body.get("cardTemplateId"):
            return _refuse(400, "InvalidParameter", "robotCode and cardTemplateId are required")
        if not isinstance(track, str) or not track or track in self.cards:
            return _refuse(400, "param.outTrackId.duplicated", "outTrackId missing or already used")
        invalid = _invalid_params(params)
        if invalid:
            return _refuse(400, "param.cardParamMap.invalid", invalid)
        refused = self._new_message(chat_id, kind == "IM_GROUP")
        if refused is not None:
            return refused
        card = Shown(chat_id, "card", dict(params))
        self.cards[track] = card
        self.shown_messages.append(card)
        return web.json_response({"success": True, "result": {"outTrackId": track, "deliverResults": [
            {"spaceType": kind, "spaceId": chat_id, "success": True}]}})

    def _put_card(self, body: dict[str, Any]) -> web.Response:
        card = self.cards.get(str(body.get("outTrackId")))
        params = body.get("cardData", {}).get("cardParamMap")
        if card is None:
            return _refuse(400, "param.outTrackId.notExist", "no card with this outTrackId")
        invalid = _invalid_params(params)
        if invalid:
            return _refuse(400, "param.cardParamMap.invalid", invalid)
        self._judge_card(str(body["outTrackId"]))
        by_key = body.get("cardUpdateOptions", {}).get("updateCardDataByKey", False)
        card.params = {**card.params, **params} if by_key else dict(params)
        return web.json_response({"success": True, "result": True})

    def _stream_card(self, body: dict[str, Any]) -> web.Response:
        track = str(body.get("outTrackId"))
        card = self.cards.get(track)
        if card is None:
            return _refuse(400, "param.outTrackId.notExist", "no card with this outTrackId")
        if not body.get("guid") or body.get("key") not in card.params or not isinstance(body.get("content"), str):
            return _refuse(400, "InvalidParameter", "guid, an existing key and a content string are required")
        if card.params.get("flowStatus") != "2":
            return _refuse(400, "card.streaming.finished", "the card is not in the inputting state")
        if len(body["content"]) > TEXT_LIMIT:
            return _refuse(400, "param.content.tooLong", f"content longer than {TEXT_LIMIT}")
        self._judge_card(track)
        key = body["key"]
        card.params[key] = body["content"] if body.get("isFull") else card.params[key] + body["content"]
        if body.get("isFinalize"):
            card.params["flowStatus"] = "3"
        return web.json_response({"success": True})

    def _judge_card(self, track: str) -> None:
        if self._card_judge.over(track):
            self.breach("per card", track)

    def _robot_send(self, body: dict[str, Any]) -> web.Response:
        group = body.get("openConversationId")
        users = body.get("userIds")
        if body.get("robotCode") != CLIENT_ID or body.get("msgKey") not in ROBOT_KEYS:
            return _refuse(400, "InvalidParameter", "robotCode or msgKey is invalid")
        try:
            param = json.loads(body.get("msgParam", ""))
        except (TypeError, ValueError):
            return _refuse(400, "InvalidParameter", "msgParam must be JSON text")
        chats = [group] if isinstance(group, str) and group else users if isinstance(users, list) else []
        if not chats:
            return _refuse(400, "InvalidParameter", "openConversationId or userIds required")
        text = str(param.get("text") or param.get("content") or param.get("fileName") or param.get("photoURL", ""))
        if len(text) > TEXT_LIMIT:
            return _refuse(400, "param.msgParam.tooLong", f"text longer than {TEXT_LIMIT}")
        refused = self._new_message(chats[0], bool(group))
        if refused is not None:
            return refused
        for chat in chats:
            self.shown_messages.append(Shown(chat, body["msgKey"], text=_unbreak(text)))
        return web.json_response({"processQueryKey": f"pqk-{next(self._ids)}"})

    async def _session_webhook(self, request: web.Request) -> web.Response:
        body = await request.json()
        self._record(request, body)
        chat_id, expires = self.webhooks.get(request.query.get("session", ""), ("", 0.0))
        if not chat_id or expires < time.time() * 1000:
            return web.json_response({"errcode": WEBHOOK_EXPIRED, "errmsg": "session webhook expired"})
        markdown = body.get("markdown") if body.get("msgtype") == "markdown" else body.get("text")
        text = markdown.get("text") or markdown.get("content") if isinstance(markdown, dict) else None
        if not isinstance(text, str) or len(text) > TEXT_LIMIT:
            return web.json_response({"errcode": 40035, "errmsg": "invalid or too long content"})
        refused = self._new_message(chat_id, not chat_id.startswith("staff"))
        if refused is not None:
            return web.json_response({"errcode": 130101, "errmsg": "send too fast, exceed 20 times per minute"})
        self.shown_messages.append(Shown(chat_id, "webhook", text=_unbreak(text)))
        return web.json_response({"errcode": 0, "errmsg": "ok"})

    async def _file(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        data = self.files.get(request.match_info["code"])
        return web.Response(body=data) if data is not None else web.Response(status=404)

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        self._record(request, {k: v for k, v in form.items() if isinstance(v, str)})
        if not self._authorized(request.query.get("access_token", "")):
            return web.json_response({"errcode": 40014, "errmsg": "invalid access_token"})
        media = form.get("media")
        if form.get("type") not in ("image", "file", "voice", "video") or not isinstance(media, web.FileField):
            return web.json_response({"errcode": 40004, "errmsg": "invalid media type or no media"})
        media_id = f"@media-{next(self._ids)}"
        self.uploads[media_id] = (media.filename, media.file.read())
        return web.json_response({"errcode": 0, "errmsg": "ok", "media_id": media_id, "type": form["type"]})


def _refuse(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"code": code, "message": message, "requestid": "fake"}, status=status)


def _invalid_params(params: Any) -> str:
    """cardParamMap: string values only; the Markdown within the text limit."""
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        return "cardParamMap must map strings to strings"
    if len(params.get("msgContent", "")) > TEXT_LIMIT:
        return f"msgContent longer than {TEXT_LIMIT}"
    return ""


def _unbreak(text: str) -> str:
    """The Markdown's hard breaks (two trailing spaces) as the chat shows them: plain line ends."""
    return "\n".join(line.removesuffix("  ") for line in text.split("\n"))
