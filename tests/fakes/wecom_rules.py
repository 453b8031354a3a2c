"""WeCom AI-bot rules the fakes enforce: limits, deadlines and the error codes WeCom answers with.

Taken from WeCom's long-connection documentation (智能机器人长连接) and what its SDKs check: stream content
up to 20 480 bytes, a stream finished within 6 minutes of its start, a welcome and a card update within
5 seconds of their event, replies on a callback's req_id for 24 hours, 30 messages a minute and 1 000 an hour into
one conversation (replies and pushes together, single chats as much as groups; refreshing a stream with the same
stream.id updates its message and is no new one), media uploads in ≤ 512 KiB chunks (≤ 100), card buttons ≤ 6 with
keys ≤ 1024 bytes.
"""

from __future__ import annotations

from typing import Any

BOT_ID, SECRET = "aibot-fake-0001", "fake-aibot-secret"
STREAM_BYTES = 20_480
STREAM_WINDOW = 360.0
EVENT_WINDOW = 5.0  # enter_chat → welcome; template_card_event → card update
REPLY_WINDOW = 24 * 3600.0
PER_CHAT = ((30, 60.0), (1000, 3600.0))  # new messages into one conversation: per minute, per hour
CHUNK_BYTES = 512 * 1024
MAX_CHUNKS = 100
MAX_BUTTONS = 6
KEY_BYTES = 1024
CARD_TYPES = frozenset({"text_notice", "news_notice", "button_interaction", "vote_interaction",
                        "multiple_interaction"})

OK = 0
BAD_SECRET = 40001
BAD_MSGTYPE = 40008
BAD_PARAM = 40058  # a field missing or out of its limits
RATE_LIMITED = 45009
NO_PRIVILEGE = 60011  # the bot is not in that chat (any more)
INVALID_REQ_ID = 846605
STREAM_EXPIRED = 846608
NOT_SUBSCRIBED = 846609


def text_problem(content: Any) -> str:
    """Why WeCom would refuse this stream / Markdown content ("" when fine)."""
    if not isinstance(content, str):
        return "content must be a string"
    if len(content.encode()) > STREAM_BYTES:
        return f"content is {len(content.encode())} bytes, over {STREAM_BYTES}"
    return ""


def card_problem(card: Any) -> str:
    """Why WeCom would refuse this template card ("" when fine)."""
    if not isinstance(card, dict):
        return "template_card must be an object"
    if card.get("card_type") not in CARD_TYPES:
        return f"unknown card_type {card.get('card_type')!r}"
    if not isinstance(card.get("task_id"), str) or not card["task_id"]:
        return "task_id required"
    title = card.get("main_title")
    if not isinstance(title, dict) or not (title.get("title") or card.get("sub_title_text")):
        return "main_title.title or sub_title_text required"
    action = card.get("card_action")
    if card["card_type"] in ("text_notice", "news_notice") and not (
            isinstance(action, dict) and action.get("type") in (1, 2) and (action.get("url") or action.get("appid"))):
        return "card_action (a link or a mini program) required"
    if card["card_type"] == "button_interaction":
        buttons = card.get("button_list")
        if not isinstance(buttons, list) or not 1 <= len(buttons) <= MAX_BUTTONS:
            return f"button_list must have 1..{MAX_BUTTONS} buttons"
        for button in buttons:
            if not isinstance(button, dict) or not button.get("text") or not isinstance(button.get("key"), str):
                return "a button needs text and key"
            if len(button["key"].encode()) > KEY_BYTES:
                return "button key over 1024 bytes"
    return ""


def card_text(card: dict[str, Any]) -> str:
    """What a chat shows of a card: its sub-title text, else its title."""
    return str(card.get("sub_title_text") or card.get("main_title", {}).get("title", ""))
