"""The fake DingTalk's robot messages: oToMessages/batchSend and groupMessages/send, session webhooks (which
expire), message files served at download URLs and media/upload on the older API (errcode answers).
Mixed into FakeDingTalk (dingtalk_api.py), which records and judges every call."""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

ROBOT_KEYS = frozenset({"sampleText", "sampleMarkdown", "sampleImageMsg", "sampleFile"})
WEBHOOK_EXPIRED = 300001  # this fake's errcode for a session webhook past its expiry
OLD_QPS_REFUSED = 90018  # the older API's refusal of an app over its calls per second to one interface
CLIENT_ID = "ding-test-client"
TEXT_LIMIT = 5000  # characters of Markdown per card or message (the adapter's MAX_CHARS must stay under it)


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


class RobotMessages:
    base: str
    client_id: str
    shown_messages: list[Shown]

    def __init__(self) -> None:
        self.uploads: dict[str, tuple[str, bytes]] = {}
        self.files: dict[str, bytes] = {}  # download code → bytes
        self.webhooks: dict[str, tuple[str, float, bool]] = {}  # session → (chat id, expiry ms, is a group)
        self._robot_ids = itertools.count(1)

    def robot_routes(self, app: web.Application) -> None:
        app.router.add_post("/robot/sendBySession", self._session_webhook)
        app.router.add_get("/files/{code}", self._file)
        app.router.add_post("/media/upload", self._upload)

    def record(self, request: web.Request, body: Any) -> None:
        raise NotImplementedError

    def authorized(self, token: str) -> bool:
        raise NotImplementedError

    def new_message(self, chat_id: str, is_group: bool) -> web.Response | None:
        raise NotImplementedError

    def over_qps(self, api: str) -> bool:
        raise NotImplementedError

    def open_webhook(self, chat_id: str, lifetime_ms: int = 5_400_000, is_group: bool = False) -> tuple[str, int]:
        session = f"sess-{next(self._robot_ids)}"
        expires = int(time.time() * 1000) + lifetime_ms
        self.webhooks[session] = (chat_id, expires, is_group)
        return f"{self.base}/robot/sendBySession?session={session}", expires

    def robot_frame(self, data: dict[str, Any]) -> dict[str, Any]:
        """A robot message as DingTalk pushes it: with a fresh session webhook for its chat."""
        data = json.loads(json.dumps(data))
        chat = data["conversationId"] if str(data.get("conversationType")) == "2" else data["senderStaffId"]
        data["sessionWebhook"], data["sessionWebhookExpiredTime"] = self.open_webhook(
            chat, is_group=str(data.get("conversationType")) == "2")
        data["robotCode"] = data["chatbotUserId"] = self.client_id
        return data

    def robot_send(self, body: dict[str, Any]) -> web.Response:
        group = body.get("openConversationId")
        users = body.get("userIds")
        if body.get("robotCode") != self.client_id or body.get("msgKey") not in ROBOT_KEYS:
            return refuse(400, "InvalidParameter", "robotCode or msgKey is invalid")
        try:
            param = json.loads(body.get("msgParam", ""))
        except (TypeError, ValueError):
            return refuse(400, "InvalidParameter", "msgParam must be JSON text")
        chats = [group] if isinstance(group, str) and group else users if isinstance(users, list) else []
        if not chats:
            return refuse(400, "InvalidParameter", "openConversationId or userIds required")
        text = str(param.get("text") or param.get("content") or param.get("fileName") or param.get("photoURL", ""))
        if len(text) > TEXT_LIMIT:
            return refuse(400, "param.msgParam.tooLong", f"text longer than {TEXT_LIMIT}")
        refused = self.new_message(chats[0], bool(group))
        if refused is not None:
            return refused
        for chat in chats:
            self.shown_messages.append(Shown(chat, body["msgKey"], text=_unbreak(text)))
        return web.json_response({"processQueryKey": f"pqk-{next(self._robot_ids)}"})

    async def _session_webhook(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.record(request, body)
        chat_id, expires, is_group = self.webhooks.get(request.query.get("session", ""), ("", 0.0, False))
        if not chat_id or expires < time.time() * 1000:
            return web.json_response({"errcode": WEBHOOK_EXPIRED, "errmsg": "session webhook expired"})
        markdown = body.get("markdown") if body.get("msgtype") == "markdown" else body.get("text")
        text = markdown.get("text") or markdown.get("content") if isinstance(markdown, dict) else None
        if not isinstance(text, str) or len(text) > TEXT_LIMIT:
            return web.json_response({"errcode": 40035, "errmsg": "invalid or too long content"})
        refused = self.new_message(chat_id, is_group)
        if refused is not None:
            return web.json_response({"errcode": 130101, "errmsg": "send too fast, exceed 20 times per minute"})
        self.shown_messages.append(Shown(chat_id, "webhook", text=_unbreak(text)))
        return web.json_response({"errcode": 0, "errmsg": "ok"})

    async def _file(self, request: web.Request) -> web.StreamResponse:
        self.record(request, None)
        data = self.files.get(request.match_info["code"])
        return web.Response(body=data) if data is not None else web.Response(status=404)

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        self.record(request, {k: v for k, v in form.items() if isinstance(v, str)})
        if not self.authorized(request.query.get("access_token", "")):
            return web.json_response({"errcode": 40014, "errmsg": "invalid access_token"})
        if self.over_qps("POST /media/upload"):
            return web.json_response({"errcode": OLD_QPS_REFUSED, "errmsg": "app calls to this API over the limit"})
        media = form.get("media")
        if form.get("type") not in ("image", "file", "voice", "video") or not isinstance(media, web.FileField):
            return web.json_response({"errcode": 40004, "errmsg": "invalid media type or no media"})
        media_id = f"@media-{next(self._robot_ids)}"
        self.uploads[media_id] = (media.filename, media.file.read())
        return web.json_response({"errcode": 0, "errmsg": "ok", "media_id": media_id, "type": form["type"]})


def refuse(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"code": code, "message": message, "requestid": "fake"}, status=status)


def _unbreak(text: str) -> str:
    """The Markdown's hard breaks (two trailing spaces) as the chat shows them: plain line ends."""
    return "\n".join(line.removesuffix("  ") for line in text.split("\n"))
