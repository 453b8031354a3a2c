"""WeCom AI-bot callbacks (long-connection frame bodies or decrypted callback bodies — the same JSON) →
IncomingMessage, parsed once at the edge.

A single chat is named by the sender's userid (what a proactive send addresses with chat_type 1), a group by
its chatid. The bot hears a group only when @mentioned; the mention leads the text and is stripped. Files
come as a short-lived URL and their own AES key; the handle is "<msgid>/<n>", the URL and key stay in the
adapter's memory (files.py), so no host is ever stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.messages import Attachment, AttachmentKind, ButtonPress, IncomingMessage

PLATFORM = "wecom"
MEDIA = {"image": AttachmentKind.IMAGE, "file": AttachmentKind.FILE, "video": AttachmentKind.VIDEO}
_MENTION = re.compile(r"^\s*@\S+\s*")


@dataclass(frozen=True, slots=True)
class Media:
    """Where one attachment's bytes are, and the key they are encrypted with."""

    url: str
    aeskey: str


@dataclass(frozen=True, slots=True)
class Parsed:
    message: IncomingMessage
    media: tuple[Media, ...]  # in the order of message.attachments that have a handle
    response_url: str  # callback mode: where a reply may go once, after the stream


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _where(body: dict[str, Any]) -> tuple[str, str, bool] | None:
    """(chat id, sender, is group); None without a sender."""
    sender = _text(_dict(body.get("from")).get("userid"))
    if not sender:
        return None
    is_group = _text(body.get("chattype")) == "group"
    chat = _text(body.get("chatid")) if is_group else sender
    return (chat, sender, is_group) if chat else None


def parse_message(body: dict[str, Any]) -> Parsed | None:
    """None for what carries nothing to answer (no id, no sender, an empty message)."""
    msgid, where = _text(body.get("msgid")), _where(body)
    if not msgid or where is None:
        return None
    chat, sender, is_group = where
    text, attachments, media = content_of(msgid, body)
    if is_group:
        text = _MENTION.sub("", text, count=1)
    text = text.strip()
    if not text and not attachments:  # a bare @mention or blanks: an opened stream would stay empty
        return None
    message = IncomingMessage(
        platform=PLATFORM, chat_id=chat, thread_id=None, message_id=msgid, user_id=sender, user_name="",
        is_group=is_group, mentioned=True,  # an AI bot receives group messages only when @mentioned
        text=text, attachments=attachments)
    return Parsed(message, media, _text(body.get("response_url")))


def content_of(msgid: str, body: dict[str, Any]) -> tuple[str, tuple[Attachment, ...], tuple[Media, ...]]:
    """Text (WeCom's own transcription for voice), the files of each message type and where they are."""
    kind = _text(body.get("msgtype"))
    if kind == "text":
        return _text(_dict(body.get("text")).get("content")), (), ()
    if kind == "voice":  # WeCom sends the recognised text, not the audio
        return _text(_dict(body.get("voice")).get("content")), (), ()
    items: list[tuple[str, dict[str, Any]]] = []
    if kind == "mixed":
        for item in _dict(body.get("mixed")).get("msg_item") or []:
            if isinstance(item, dict):
                items.append((_text(item.get("msgtype")), _dict(item.get(_text(item.get("msgtype"))))))
    elif kind in MEDIA:
        items.append((kind, _dict(body.get(kind))))
    elif kind:  # a kind the bot cannot read: the hub answers with a polite note
        return "", (Attachment(AttachmentKind.OTHER, name=kind[:40]),), ()
    texts: list[str] = []
    files: list[Attachment] = []
    media: list[Media] = []
    for item_kind, item in items:
        if item_kind == "text":
            texts.append(_text(item.get("content")))
        elif item_kind in MEDIA and _text(item.get("url")) and _text(item.get("aeskey")):
            files.append(Attachment(MEDIA[item_kind], name=_text(item.get("filename")),
                                    handle=f"{msgid}/{len(media)}"))
            media.append(Media(_text(item.get("url")), _text(item.get("aeskey"))))
    return "\n".join(t for t in texts if t), tuple(files), tuple(media)


@dataclass(frozen=True, slots=True)
class Event:
    kind: str  # enter_chat, template_card_event, disconnected_event, …
    msgid: str
    chat_id: str
    user_id: str
    is_group: bool
    event_key: str  # a card button's key: the command text it stands for
    task_id: str  # the card's id

    def press(self, req_id: str) -> IncomingMessage:
        return IncomingMessage(
            platform=PLATFORM, chat_id=self.chat_id, thread_id=None, message_id=f"press:{self.msgid}",
            user_id=self.user_id, user_name="", is_group=self.is_group, mentioned=True, text=self.event_key,
            origin=ButtonPress(press_id=req_id, message_id=self.task_id))


def parse_event(body: dict[str, Any]) -> Event | None:
    event = _dict(body.get("event"))
    kind = _text(event.get("eventtype"))
    if not kind:
        return None
    where = _where(body) or ("", "", False)
    card = _dict(event.get("template_card_event"))
    return Event(kind, _text(body.get("msgid")), where[0], where[1], where[2],
                 _text(card.get("event_key")).strip(), _text(card.get("task_id")))
