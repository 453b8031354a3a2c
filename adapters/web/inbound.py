"""A POSTed chat line → IncomingMessage: a browser session talks one to one with the bot."""

from __future__ import annotations

import uuid

from bot.messages import ButtonPress, IncomingMessage

PLATFORM = "web"
MAX_TEXT = 32_000  # characters one message may carry


class BadMessage(ValueError):
    """Wording for the person in the browser."""


def parse_post(chat_id: str, body: object) -> IncomingMessage:
    """`{"text": "..."}` (a typed line) or `{"text": "/goto 3", "button": true}` (a pressed button)."""
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        raise BadMessage('send JSON like {"text": "hello"}')
    text = body["text"]
    if not text.strip():
        raise BadMessage("the message is empty")
    if len(text) > MAX_TEXT:
        raise BadMessage(f"the message is longer than {MAX_TEXT} characters")
    message_id = uuid.uuid4().hex
    origin = ButtonPress(message_id, None) if body.get("button") is True else None
    return IncomingMessage(
        platform=PLATFORM, chat_id=chat_id, thread_id=None, message_id=message_id, user_id="admin",
        user_name="admin", is_group=False, mentioned=True, text=text, origin=origin,
    )
