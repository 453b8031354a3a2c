"""DingTalk robot callbacks (Stream frames or HTTP bodies) → IncomingMessage, parsed once at the edge.

A one-to-one chat is named by the sender's staff id (what the robot OpenAPI and a card's IM_ROBOT space
address), a group by its openConversationId. Robots see group talk only when @mentioned, so nothing is
overheard. Files come as download codes; the handle is "<msgtype>/<downloadCode>", never a host.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.messages import Attachment, AttachmentKind, ButtonPress, IncomingMessage

PLATFORM = "dingtalk"
KINDS = {"picture": AttachmentKind.IMAGE, "file": AttachmentKind.FILE, "audio": AttachmentKind.AUDIO,
         "video": AttachmentKind.VIDEO}


@dataclass(frozen=True, slots=True)
class Robot:
    """One robot message, with the session webhook DingTalk gave for replying to it."""

    message: IncomingMessage
    webhook: str
    webhook_expires_ms: int


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def parse_robot(data: dict[str, Any]) -> Robot | None:
    """None for what carries nothing to answer (no id, no sender, an empty message)."""
    message_id, sender = _text(data.get("msgId")), _text(data.get("senderStaffId")) or _text(data.get("senderId"))
    if not message_id or not sender:
        return None
    is_group = str(data.get("conversationType", "1")) == "2"
    chat_id = _text(data.get("conversationId")) if is_group else sender
    if not chat_id:
        return None
    text, attachments = content_of(data)
    if not text and not attachments:
        return None
    message = IncomingMessage(
        platform=PLATFORM, chat_id=chat_id, thread_id=None, message_id=message_id, user_id=sender,
        user_name=_text(data.get("senderNick")), is_group=is_group,
        mentioned=True,  # a robot receives group messages only when it is @mentioned
        text=text, attachments=attachments)
    expires = data.get("sessionWebhookExpiredTime")
    return Robot(message, _text(data.get("sessionWebhook")), expires if type(expires) is int else 0)


def content_of(data: dict[str, Any]) -> tuple[str, tuple[Attachment, ...]]:
    """Text (a voice message's transcription for audio) and the files of each message type."""
    kind = _text(data.get("msgtype"))
    raw = data.get("content")
    content: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if kind == "text":
        body = data.get("text")
        return (_text(body.get("content")).strip() if isinstance(body, dict) else ""), ()
    if kind == "richText":
        texts: list[str] = []
        files: list[Attachment] = []
        items = content.get("richText")
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            if item.get("downloadCode"):
                files.append(_attachment("picture", item))
            elif item.get("text"):
                texts.append(_text(item.get("text")))
        return "".join(texts).strip(), tuple(files)
    if kind in KINDS and content.get("downloadCode"):
        text = _text(content.get("recognition")).strip() if kind == "audio" else ""
        return text, (_attachment(kind, content),)
    # a kind the bot cannot read (a shared chat record, a card, a location): the hub answers with a polite note
    return "", (Attachment(AttachmentKind.OTHER, name=kind[:40]),) if kind else ()


def _attachment(kind: str, content: dict[str, Any]) -> Attachment:
    name = _text(content.get("fileName"))
    size = content.get("fileSize")
    return Attachment(KINDS[kind], name=name, size=size if isinstance(size, int) else None,
                      handle=f"{kind}/{_text(content.get('downloadCode'))}")


@dataclass(frozen=True, slots=True)
class CardPress:
    """A card button: the button's id is the command text it stands for."""

    card_id: str
    user_id: str
    action: str
    space_type: str
    space_id: str

    def to_message(self, press_id: str, is_group: bool | None, chat_id: str | None) -> IncomingMessage:
        group = self.space_type.upper() == "IM_GROUP" if is_group is None else is_group
        chat = chat_id or (self.space_id if group else self.user_id)
        return IncomingMessage(
            platform=PLATFORM, chat_id=chat, thread_id=None, message_id=f"press:{press_id}", user_id=self.user_id,
            user_name="", is_group=group, mentioned=True, text=self.action,
            origin=ButtonPress(press_id=press_id, message_id=self.card_id))


def parse_card_callback(data: dict[str, Any]) -> CardPress | None:
    """A card callback's `content` is JSON text holding cardPrivateData.actionIds (the pressed button's id)."""
    try:
        content = json.loads(_text(data.get("content")) or "{}")
    except ValueError:
        return None
    private = content.get("cardPrivateData") if isinstance(content, dict) else None
    actions = private.get("actionIds") if isinstance(private, dict) else None
    action = actions[0] if isinstance(actions, list) and actions and isinstance(actions[0], str) else ""
    card_id, user_id = _text(data.get("outTrackId")), _text(data.get("userId"))
    if not (action.strip() and card_id and user_id):
        return None
    return CardPress(card_id, user_id, action.strip(), _text(data.get("spaceType")), _text(data.get("spaceId")))
