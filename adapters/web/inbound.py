"""A POSTed chat line (JSON, or a form with files) → IncomingMessage: one browser session, one chat."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from aiohttp import BodyPartReader, MultipartReader

from adapters.web.files import kind_of
from bot.messages import Attachment, ButtonPress, IncomingMessage

PLATFORM = "web"
USER = "admin"  # whoever signed in to the dashboard: one person, the admin
MAX_TEXT = 32_000  # characters one message may carry
MAX_PARTS = 50  # form fields and files in one post; more is not a chat message
TOO_BIG = "too-big"  # the handle of a file not kept: intake refuses it by its size before fetching


class BadMessage(ValueError):
    """Wording for the person in the browser."""


def parse_post(chat_id: str, body: object) -> IncomingMessage:
    """`{"text": "..."}` (a typed line) or `{"text": "/goto 3", "button": true}` (a pressed button)."""
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        raise BadMessage('send JSON like {"text": "hello"}')
    return _message(chat_id, body["text"], body.get("button") is True, ())


async def parse_form(chat_id: str, form: MultipartReader, max_bytes: int,
                     stage: Callable[[bytes], str]) -> IncomingMessage:
    """A `text` field and any number of `files`: each file's bytes are staged (up to `max_bytes`; a bigger
    one is drained, not kept, and arrives with its true size so intake refuses it politely)."""
    text, attachments = "", list[Attachment]()
    for _ in range(MAX_PARTS):
        part = await form.next()
        if part is None:
            return _message(chat_id, text, False, tuple(attachments))
        if not isinstance(part, BodyPartReader):
            raise BadMessage("nested forms are not a chat message")
        if part.name == "text":
            text = await part.text()
        elif part.name == "files" and part.filename:
            data, size = await _read_capped(part, max_bytes)
            mime = part.headers.get("Content-Type", "").split(";")[0].strip().lower()
            attachments.append(Attachment(kind_of(mime), part.filename, mime, size,
                                          stage(data) if size <= max_bytes else TOO_BIG))
        else:
            await part.release()
    raise BadMessage(f"a message takes at most {MAX_PARTS} fields and files")


async def _read_capped(part: BodyPartReader, max_bytes: int) -> tuple[bytes, int]:
    chunks, size = list[bytes](), 0
    while chunk := await part.read_chunk():
        size += len(chunk)
        if size <= max_bytes:
            chunks.append(chunk)
    return (b"".join(chunks) if size <= max_bytes else b""), size


def _message(chat_id: str, text: str, button: bool, attachments: tuple[Attachment, ...]) -> IncomingMessage:
    if not text.strip() and not attachments:
        raise BadMessage("the message is empty")
    if len(text) > MAX_TEXT:
        raise BadMessage(f"the message is longer than {MAX_TEXT} characters")
    message_id = uuid.uuid4().hex
    origin = ButtonPress(message_id, None) if button else None
    return IncomingMessage(
        platform=PLATFORM, chat_id=chat_id, thread_id=None, message_id=message_id, user_id=USER,
        user_name=USER, is_group=False, mentioned=True, text=text, origin=origin, attachments=attachments,
    )
