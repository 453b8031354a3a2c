"""What the fake WeCom does with the bot's replies: streams (opened, refreshed, finished, dropped when late),
template cards (sent, replaced after a press), welcomes, proactive pushes and chunked media uploads, each
checked against WeCom's rules (wecom_rules.py) and shown in its chat as a user would read it.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from tests.fakes import wecom_rules as rules


@dataclass
class Call:
    at: float
    cmd: str
    req_id: str
    body: dict[str, Any]
    errcode: int = 0


@dataclass
class Callback:
    """A message or event pushed to the bot, and what answering it allows."""

    kind: str  # "message" or the event's eventtype
    chat: str
    is_group: bool
    at: float
    answered: int = 0
    task_id: str = ""


@dataclass
class Shown:
    chat: str
    kind: str  # stream, card, markdown, image, file
    id: str
    text: str
    at: float = field(default_factory=time.monotonic)
    open: bool = False


Answer = tuple[int, dict[str, Any] | None]


class Replies:
    callbacks: dict[str, Callback]

    def __init__(self) -> None:
        self.items: list[Shown] = []
        self.known_chats: set[str] = set()  # proactive sends reach only chats that talked to the bot
        self.welcomes: list[str] = []
        self._uploads: dict[str, dict[str, Any]] = {}
        self._media_ids: set[str] = set()
        self._n = itertools.count(1)

    def budget(self, chat: str) -> bool:
        raise NotImplementedError

    def shown(self, chat: str) -> list[str]:
        return [item.text for item in self.items if item.chat == chat]

    def item(self, item_id: str) -> Shown | None:
        return next((i for i in self.items if i.id == item_id), None)

    def stream_open(self, stream_id: str) -> bool:
        item = self.item(stream_id)
        return item is not None and item.open and time.monotonic() - item.at < rules.STREAM_WINDOW

    def reply_frame(self, cmd: str, rid: str, body: dict[str, Any]) -> Answer:
        if cmd == "aibot_respond_msg":
            return self._respond(rid, body)
        if cmd == "aibot_respond_welcome_msg":
            return self._welcome(rid, body)
        if cmd == "aibot_respond_update_msg":
            return self._update(rid, body)
        if cmd == "aibot_send_msg":
            chat = str(body.get("chatid", ""))
            if body.get("chat_type") not in (1, 2) or chat not in self.known_chats:
                return rules.NO_PRIVILEGE, None
            return self._new(chat, body)
        if cmd.startswith("aibot_upload_media_"):
            return self._upload(cmd.removeprefix("aibot_upload_media_"), body)
        return rules.BAD_MSGTYPE, None

    def _callback(self, rid: str, kind: str, window: float) -> Callback | None:
        found = self.callbacks.get(rid)
        if found is None or (found.kind == "message") != (kind == "message") or \
                (kind != "message" and found.kind != kind) or time.monotonic() - found.at > window:
            return None
        return found

    def _respond(self, rid: str, body: dict[str, Any]) -> Answer:
        callback = self._callback(rid, "message", rules.REPLY_WINDOW)
        if callback is None:
            return rules.INVALID_REQ_ID, None
        if body.get("msgtype") == "stream":
            stream = body.get("stream")
            if not isinstance(stream, dict) or not isinstance(stream.get("id"), str):
                return rules.BAD_PARAM, None
            existing = self.item(stream["id"])
            if existing is not None:
                if not existing.open or time.monotonic() - existing.at > rules.STREAM_WINDOW:
                    existing.open = False
                    return rules.STREAM_EXPIRED, None
                if rules.text_problem(stream.get("content")):
                    return rules.BAD_PARAM, None
                existing.text, existing.open = str(stream["content"]), not stream.get("finish")
                return rules.OK, None
        return self._new(callback.chat, body)

    def _new(self, chat: str, body: dict[str, Any]) -> Answer:
        kind = body.get("msgtype")
        shown: tuple[str, str, bool] | None = None  # (id, text, open)
        if kind == "stream":
            stream = body.get("stream") or {}
            if not rules.text_problem(stream.get("content")):
                shown = (str(stream.get("id")), str(stream["content"]), not stream.get("finish"))
        elif kind == "markdown":
            content = (body.get("markdown") or {}).get("content")
            if not rules.text_problem(content):
                shown = (f"md-{next(self._n)}", str(content), False)
        elif kind == "template_card":
            card = body.get("template_card")
            if not rules.card_problem(card) and self.item(card["task_id"]) is None:
                shown = (card["task_id"], rules.card_text(card), False)
        elif kind in ("image", "file"):
            media_id = (body.get(kind) or {}).get("media_id")
            if media_id in self._media_ids:
                shown = (media_id, f"[{kind}]", False)
        else:
            return rules.BAD_MSGTYPE, None
        if shown is None:
            return rules.BAD_PARAM, None
        if not self.budget(chat):
            return rules.RATE_LIMITED, None
        self.items.append(Shown(chat, str(kind), shown[0], shown[1], open=shown[2]))
        return rules.OK, None

    def _welcome(self, rid: str, body: dict[str, Any]) -> Answer:
        callback = self._callback(rid, "enter_chat", rules.EVENT_WINDOW)
        if callback is None or callback.answered:
            return rules.INVALID_REQ_ID, None
        text = (body.get("text") or {}).get("content") if body.get("msgtype") == "text" else None
        if not isinstance(text, str) or not text:
            return rules.BAD_PARAM, None
        callback.answered += 1
        self.welcomes.append(text)
        return rules.OK, None

    def _update(self, rid: str, body: dict[str, Any]) -> Answer:
        callback = self._callback(rid, "template_card_event", rules.EVENT_WINDOW)
        if callback is None or callback.answered:
            return rules.INVALID_REQ_ID, None
        card = body.get("template_card")
        if body.get("response_type") != "update_template_card" or rules.card_problem(card):
            return rules.BAD_PARAM, None
        pressed = self.item(callback.task_id)
        if pressed is None or card["task_id"] != callback.task_id:
            return rules.BAD_PARAM, None  # only the pressed card can be updated
        callback.answered += 1
        pressed.text = rules.card_text(card)
        return rules.OK, None

    def _upload(self, step: str, body: dict[str, Any]) -> Answer:
        if step == "init":
            total, chunks = body.get("total_chunks"), body.get("total_size")
            if body.get("type") not in ("image", "file", "voice", "video") or not isinstance(total, int) \
                    or not 1 <= total <= rules.MAX_CHUNKS or not isinstance(chunks, int) or chunks < 5:
                return rules.BAD_PARAM, None
            upload_id = f"up-{next(self._n)}"
            self._uploads[upload_id] = {**body, "parts": {}}
            return rules.OK, {"upload_id": upload_id}
        upload = self._uploads.get(str(body.get("upload_id")))
        if upload is None:
            return rules.BAD_PARAM, None
        if step == "chunk":
            data = base64.b64decode(str(body.get("base64_data", "")))
            if len(data) > rules.CHUNK_BYTES or not 0 <= int(body.get("chunk_index", -1)) < upload["total_chunks"]:
                return rules.BAD_PARAM, None
            upload["parts"][int(body["chunk_index"])] = data
            return rules.OK, None
        data = b"".join(upload["parts"][i] for i in sorted(upload["parts"]))
        if len(upload["parts"]) != upload["total_chunks"] or hashlib.md5(data).hexdigest() != upload["md5"]:
            return rules.BAD_PARAM, None
        media_id = f"media-{next(self._n)}"
        self._media_ids.add(media_id)
        upload["data"] = data
        return rules.OK, {"media_id": media_id, "type": upload["type"]}
