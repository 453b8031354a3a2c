"""A request's body and path → IncomingMessage (and its callback URL): pure, every refusal worded for the caller."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

from bot.adapter import TokenHolder
from bot.messages import IncomingMessage

PLATFORM = "api"
MAX_TEXT = 32_000  # characters one message may carry
_KEY = re.compile(r"[A-Za-z0-9_.~-]{1,64}")
_FIELDS = frozenset({"text", "callback_url"})


class BadRequest(ValueError):
    """What was wrong with the request, for the system that sent it."""


@dataclass(frozen=True, slots=True)
class ApiRequest:
    message: IncomingMessage
    callback_url: str | None


def chat_id(holder: TokenHolder, conversation_key: str) -> str:
    """The token's id first: the same key under another token is another chat."""
    return f"{holder.id}.{conversation_key}"


def parse(holder: TokenHolder, conversation_key: str, body: bytes) -> ApiRequest:
    """`{"text": "hello"}`, optionally with `"callback_url": "https://…"`; commands are text ("/new")."""
    if not _KEY.fullmatch(conversation_key):
        raise BadRequest("the conversation key must be 1-64 letters, digits or . _ ~ -")
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest('the body must be JSON like {"text": "hello"}') from None
    if not isinstance(data, dict):
        raise BadRequest('the body must be a JSON object like {"text": "hello"}')
    if unknown := sorted(set(data) - _FIELDS):
        raise BadRequest(f"unknown field {', '.join(unknown)} (known: text, callback_url)")
    text, callback = data.get("text"), data.get("callback_url")
    if not isinstance(text, str):
        raise BadRequest('"text" must be a string')
    if not text.strip():
        raise BadRequest('"text" is empty')
    if len(text) > MAX_TEXT:
        raise BadRequest(f'"text" is longer than {MAX_TEXT} characters')
    if callback is not None and (not isinstance(callback, str) or not callback.strip()):
        raise BadRequest('"callback_url" must be an http(s) URL')
    message = IncomingMessage(
        platform=PLATFORM, chat_id=chat_id(holder, conversation_key), thread_id=None,
        message_id=uuid.uuid4().hex, user_id=holder.id, user_name=holder.name, is_group=False, mentioned=True,
        text=text)
    return ApiRequest(message, callback.strip() if callback else None)
