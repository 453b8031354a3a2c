"""Feishu events (lark-oapi models) → IncomingMessage, or Overheard for group messages that do not @mention
the bot (delivered with the "read all group messages" permission). Nothing from the SDK travels past this
module."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from lark_oapi.api.application.v6 import P2ApplicationBotMenuV6
from lark_oapi.api.im.v1 import EventMessage, P2ImMessageReceiveV1
from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTrigger

from adapters.feishu.files import resource_handle
from bot.messages import Attachment, ButtonPress, IncomingMessage, Overheard

PLATFORM = "feishu"
_MENU_KEY = re.compile(r"[a-z0-9_]{1,30}")  # a menu item's event key names the command it runs
ATTACHMENT_KINDS = {"image": "image", "sticker": "sticker", "audio": "audio", "media": "video", "file": "file"}
DEFAULT_NAMES = {"image": "image", "audio": "audio.opus", "media": "video.mp4", "file": "file"}


@dataclass(frozen=True, slots=True)
class ParsedEvent:
    """An inbound message plus the event id Feishu reuses when it redelivers."""

    event_id: str
    message: IncomingMessage


@dataclass(frozen=True, slots=True)
class CardPress:
    """A card button; the chat kind and thread are resolved later (the callback does not carry them)."""

    event_id: str
    action: str
    user_id: str
    chat_id: str
    card_message_id: str

    def to_message(self, is_group: bool, thread_id: str | None) -> IncomingMessage:
        return IncomingMessage(
            platform=PLATFORM,
            chat_id=self.chat_id,
            thread_id=thread_id,
            message_id=self.event_id,
            user_id=self.user_id,
            user_name=self.user_id,
            is_group=is_group,
            mentioned=True,
            text=self.action,
            origin=ButtonPress(self.event_id, self.card_message_id),
        )


def parse_message(data: P2ImMessageReceiveV1, bot_open_id: str) -> ParsedEvent | Overheard | None:
    """None for what is not a user's message (bots, apps, malformed events); Overheard for group talk that
    does not @mention the bot (a /command in a group may be meant for another bot, so it is talk too)."""
    event, header = data.event, data.header
    if event is None or header is None or event.message is None or event.sender is None:
        return None
    if event.sender.sender_type != "user" or event.sender.sender_id is None:
        return None
    msg = event.message
    if not (msg.message_id and msg.chat_id and header.event_id):
        return None
    is_group = msg.chat_type != "p2p"
    text, attachments = _content(msg)
    text, at_bot = _resolve_mentions(text, msg, bot_open_id)
    text = text.strip()
    user_id = event.sender.sender_id.open_id or event.sender.sender_id.user_id or ""
    if is_group and not at_bot:  # the event names no sender, only ids: the open_id stands for the name
        return Overheard(PLATFORM, msg.chat_id, msg.thread_id or None, msg.message_id, user_id, user_id, text,
                         attachments)
    return ParsedEvent(
        event_id=header.event_id,
        message=IncomingMessage(
            platform=PLATFORM,
            chat_id=msg.chat_id,
            thread_id=msg.thread_id or None,
            message_id=msg.message_id,
            user_id=user_id,
            user_name=user_id,
            is_group=is_group,
            mentioned=True,
            text=text,
            reply_to=msg.parent_id or None,
            attachments=attachments,
        ),
    )


def parse_card_action(data: P2CardActionTrigger) -> CardPress | None:
    """A press of one of our buttons: its value carries the command text under "action"."""
    event, header = data.event, data.header
    if event is None or header is None or event.action is None or event.context is None:
        return None
    action = (event.action.value or {}).get("action")
    ctx = event.context
    if not isinstance(action, str) or not action.strip() or not header.event_id:
        return None
    if not (ctx.open_chat_id and ctx.open_message_id):
        return None
    user_id = (event.operator.open_id or "") if event.operator else ""
    return CardPress(header.event_id, action.strip(), user_id, ctx.open_chat_id, ctx.open_message_id)


def parse_menu(data: P2ApplicationBotMenuV6) -> ParsedEvent | None:
    """A press on the bot's custom menu: event key `tree` runs /tree. The event names the user but not the
    chat, so chat_id is the user's open_id until the adapter knows their one-to-one chat."""
    event, header = data.event, data.header
    if event is None or header is None or not header.event_id or event.operator is None:
        return None
    user = event.operator.operator_id.open_id if event.operator.operator_id else None
    if not user or not event.event_key or not _MENU_KEY.fullmatch(event.event_key):
        return None
    name = event.operator.operator_name or user
    return ParsedEvent(header.event_id, IncomingMessage(
        platform=PLATFORM, chat_id=user, thread_id=None, message_id=header.event_id, user_id=user,
        user_name=name, is_group=False, mentioned=True, text=f"/{event.event_key}"))


def _content(msg: EventMessage) -> tuple[str, tuple[Attachment, ...]]:
    try:
        content = json.loads(msg.content or "{}")
    except ValueError:
        content = {}
    if not isinstance(content, dict):
        content = {}
    if msg.message_type == "text":
        return str(content.get("text", "")), ()
    message_id = msg.message_id or ""
    if msg.message_type == "post":
        return post_to_text(content), _post_images(content, message_id)
    kind = ATTACHMENT_KINDS.get(msg.message_type or "", "other")
    return "", (_attachment(msg.message_type or "", kind, content, message_id),)


def _attachment(message_type: str, kind: str, content: dict[str, Any], message_id: str) -> Attachment:
    """Images are fetched by image_key, everything else (a video too, not its cover) by file_key."""
    name = str(content.get("file_name") or DEFAULT_NAMES.get(message_type, ""))
    key, resource = (content.get("image_key"), "image") if kind == "image" else (content.get("file_key"), "file")
    if kind in ("sticker", "other") or not isinstance(key, str) or not key:
        return Attachment(kind=kind, name=name)
    return Attachment(kind=kind, name=name, handle=resource_handle(message_id, key, resource))


def _post_images(content: dict[str, Any], message_id: str) -> tuple[Attachment, ...]:
    body = _post_body(content)
    return tuple(_attachment("image", "image", el, message_id)
                 for paragraph in body.get("content") or [] if isinstance(paragraph, list)
                 for el in paragraph if isinstance(el, dict) and el.get("tag") == "img")


def _post_body(content: dict[str, Any]) -> dict[str, Any]:
    """Events carry {"title", "content"}; sent posts wrap that in a locale."""
    if "content" not in content:
        return next((v for v in content.values() if isinstance(v, dict)), {})
    return content


def post_to_text(content: dict[str, Any]) -> str:
    """Rich text → plain text."""
    content = _post_body(content)
    lines = [str(content["title"])] if content.get("title") else []
    for paragraph in content.get("content") or []:
        if isinstance(paragraph, list):
            lines.append("".join(_post_element(el) for el in paragraph if isinstance(el, dict)))
    return "\n".join(lines)


def _post_element(el: dict[str, Any]) -> str:
    tag = el.get("tag")
    if tag in ("text", "a", "md"):
        return str(el.get("text", ""))
    if tag == "at":  # in events user_id is the placeholder key ("@_user_1"), resolved with mentions
        return str(el.get("user_id", ""))
    if tag == "code_block":
        return f"\n```{el.get('language', '').lower()}\n{el.get('text', '')}\n```\n"
    if tag == "emotion":
        return f":{el.get('emoji_type', '')}:"
    return ""


def _resolve_mentions(text: str, msg: EventMessage, bot_open_id: str) -> tuple[str, bool]:
    """Strip the bot's placeholder, show other people as @Name; @all is not a mention of the bot."""
    at_bot = False
    # longest keys first so "@_user_1" never eats the start of "@_user_10"
    for mention in sorted(msg.mentions or [], key=lambda m: len(m.key or ""), reverse=True):
        if not mention.key:
            continue
        open_id = mention.id.open_id if mention.id else None
        if bot_open_id and open_id == bot_open_id:
            at_bot = True
            text = text.replace(mention.key, "")
        else:
            text = text.replace(mention.key, f"@{mention.name or 'user'}")
    return text.replace("@_all", "@all"), at_bot
