"""Feishu events (schema 2.0 JSON, decoded) → IncomingMessage, or Overheard for group messages that do not
@mention the bot (delivered with the "read all group messages" permission). Nothing raw travels past this module.

Events are plain dicts checked field by field: a field of the wrong type reads as missing, so a malformed
event is skipped (None), never an exception.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from adapters.feishu.files import resource_handle
from bot.messages import Attachment, AttachmentKind, ButtonPress, IncomingMessage, Overheard

Json = dict[str, Any]
PLATFORM = "feishu"
_MENU_KEY = re.compile(r"[a-z0-9_]{1,30}")  # a menu item's event key names the command it runs
ATTACHMENT_KINDS = {"image": AttachmentKind.IMAGE, "sticker": AttachmentKind.STICKER, "audio": AttachmentKind.AUDIO,
                    "media": AttachmentKind.VIDEO, "file": AttachmentKind.FILE}
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


def obj(parent: Any, key: str) -> Json:
    """parent[key] if it is a JSON object, else {}."""
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else {}


def text(parent: Any, key: str) -> str:
    """parent[key] if it is a string, else ""."""
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, str) else ""


def parse_message(data: Json, bot_open_id: str) -> ParsedEvent | Overheard | None:
    """im.message.receive_v1 → message; None for what is not a user's message (bots, apps, malformed events);
    Overheard for group talk that does not @mention the bot (a /command in a group may be meant for another bot,
    so it is talk too)."""
    event, event_id = obj(data, "event"), text(obj(data, "header"), "event_id")
    sender, msg = obj(event, "sender"), obj(event, "message")
    if text(sender, "sender_type") != "user" or not isinstance(sender.get("sender_id"), dict):
        return None
    message_id, chat_id = text(msg, "message_id"), text(msg, "chat_id")
    if not (message_id and chat_id and event_id):
        return None
    is_group = text(msg, "chat_type") != "p2p"
    body, attachments = _content(msg)
    body, at_bot = _resolve_mentions(body, msg, bot_open_id)
    body = body.strip()
    sender_id = obj(sender, "sender_id")
    user_id = text(sender_id, "open_id") or text(sender_id, "user_id")
    thread_id = text(msg, "thread_id") or None
    if is_group and not at_bot:  # the event names no sender, only ids: the open_id stands for the name
        return Overheard(PLATFORM, chat_id, thread_id, message_id, user_id, user_id, body, attachments)
    return ParsedEvent(
        event_id=event_id,
        message=IncomingMessage(
            platform=PLATFORM,
            chat_id=chat_id,
            thread_id=thread_id,
            message_id=message_id,
            user_id=user_id,
            user_name=user_id,
            is_group=is_group,
            mentioned=True,
            text=body,
            reply_to=text(msg, "parent_id") or None,
            attachments=attachments,
            order=int(created) if (created := text(msg, "create_time")).isdigit() else None,  # ms since the epoch
        ),
    )


def parse_card_action(data: Json) -> CardPress | None:
    """card.action.trigger: a press of one of our buttons; its value carries the command text under "action"."""
    event, event_id = obj(data, "event"), text(obj(data, "header"), "event_id")
    action = text(obj(obj(event, "action"), "value"), "action").strip()
    ctx = obj(event, "context")
    chat_id, card_message_id = text(ctx, "open_chat_id"), text(ctx, "open_message_id")
    if not (action and event_id and chat_id and card_message_id):
        return None
    return CardPress(event_id, action, text(obj(event, "operator"), "open_id"), chat_id, card_message_id)


def parse_menu(data: Json) -> ParsedEvent | None:
    """application.bot.menu_v6: a press on the bot's custom menu; event key `tree` runs /tree. The event names the
    user but not the chat, so chat_id is the user's open_id until the adapter knows their one-to-one chat."""
    event, event_id = obj(data, "event"), text(obj(data, "header"), "event_id")
    operator = obj(event, "operator")
    user, key = text(obj(operator, "operator_id"), "open_id"), text(event, "event_key")
    if not (event_id and user and _MENU_KEY.fullmatch(key)):
        return None
    name = text(operator, "operator_name") or user
    return ParsedEvent(event_id, IncomingMessage(
        platform=PLATFORM, chat_id=user, thread_id=None, message_id=event_id, user_id=user,
        user_name=name, is_group=False, mentioned=True, text=f"/{key}"))


def _content(msg: Json) -> tuple[str, tuple[Attachment, ...]]:
    try:
        content = json.loads(text(msg, "content") or "{}")
    except ValueError:
        content = {}
    if not isinstance(content, dict):
        content = {}
    message_type = text(msg, "message_type")
    if message_type == "text":
        return str(content.get("text", "")), ()
    message_id = text(msg, "message_id")
    if message_type == "post":
        return post_to_text(content), _post_images(content, message_id)
    kind = ATTACHMENT_KINDS.get(message_type, AttachmentKind.OTHER)
    return "", (_attachment(message_type, kind, content, message_id),)


def _attachment(message_type: str, kind: AttachmentKind, content: dict[str, Any], message_id: str) -> Attachment:
    """Images are fetched by image_key, everything else (a video too, not its cover) by file_key."""
    name = str(content.get("file_name") or DEFAULT_NAMES.get(message_type, ""))
    image = kind is AttachmentKind.IMAGE
    key, resource = (content.get("image_key"), "image") if image else (content.get("file_key"), "file")
    if kind in (AttachmentKind.STICKER, AttachmentKind.OTHER) or not isinstance(key, str) or not key:
        return Attachment(kind=kind, name=name)
    return Attachment(kind=kind, name=name, handle=resource_handle(message_id, key, resource))


def _post_images(content: dict[str, Any], message_id: str) -> tuple[Attachment, ...]:
    body = _post_body(content)
    return tuple(_attachment("image", AttachmentKind.IMAGE, el, message_id)
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


def _resolve_mentions(body: str, msg: Json, bot_open_id: str) -> tuple[str, bool]:
    """Strip the bot's placeholder, show other people as @Name; @all is not a mention of the bot."""
    at_bot = False
    mentions = msg.get("mentions")
    found = [m for m in mentions if isinstance(m, dict) and text(m, "key")] if isinstance(mentions, list) else []
    # longest keys first so "@_user_1" never eats the start of "@_user_10"
    for mention in sorted(found, key=lambda m: len(text(m, "key")), reverse=True):
        key = text(mention, "key")
        if bot_open_id and text(obj(mention, "id"), "open_id") == bot_open_id:
            at_bot = True
            body = body.replace(key, "")
        else:
            body = body.replace(key, f"@{text(mention, 'name') or 'user'}")
    return body.replace("@_all", "@all"), at_bot
