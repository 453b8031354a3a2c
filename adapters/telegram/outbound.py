"""Replies onto Telegram: HTML parts under the limit, inline keyboards, edits, typed errors.

The hub owns pacing and retries; this module only turns one call into the right Bot API requests and
Telegram's answers into RateLimited / ChatUnavailable / SendFailed.
"""

from __future__ import annotations

import datetime as dtm
import logging
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from telegram import Bot, InlineKeyboardMarkup, InputFile, LinkPreviewOptions, Message, ReplyParameters
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, RetryAfter, TelegramError

from adapters.telegram.render import Rendered, keyboard, render_parts
from bot.adapter import ChatUnavailable, OutgoingFile, RateLimited, SendFailed
from bot.messages import Attachment, ChatRef, ReplyTo, SentRef
from bot.replies import Reply

log = logging.getLogger("bothub.telegram")

# 400s that mean "you cannot post here", not "this request was malformed"
_UNAVAILABLE = ("chat not found", "not enough rights", "have no rights", "topic_closed", "bot was kicked")
T = TypeVar("T")
_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


MAX_UPLOAD = 50_000_000  # the Bot API takes files up to 50 MB from bots (and serves them up to 20 MB)
CHUNK = 65_536


def chat_key(chat_id: str) -> int | str:
    return int(chat_id) if chat_id.lstrip("-").isdigit() else chat_id


class TelegramFiles:
    """getFile + download for what users attach; sendPhoto / sendVoice / sendDocument for what the agent sends.

    The Bot API serves at most 20 MB per file, so a download is held in memory at most that large
    before it is written out in chunks (the intake caps it again with its own limit).
    """

    max_upload = MAX_UPLOAD

    def __init__(self, outbound: Outbound) -> None:
        self._outbound = outbound

    async def download(self, attachment: Attachment) -> AsyncIterator[bytes]:
        try:
            remote = await self._outbound.bot.get_file(attachment.handle)
            data = await remote.download_as_bytearray()
        except TelegramError as e:
            raise SendFailed(f"{type(e).__name__}: {e.message}") from e
        for start in range(0, len(data), CHUNK):
            yield bytes(data[start : start + CHUNK])

    async def upload(self, chat: ChatRef, file: OutgoingFile) -> SentRef:
        content = file.data
        bot, target, thread = self._outbound.bot, chat_key(chat.chat_id), _thread(chat)
        caption = file.caption[:1024] or None  # Telegram's caption limit
        if file.voice is not None:  # OGG/Opus: shown as a voice message with its length
            duration = max(1, round(file.voice.duration))
            sent = await self._outbound.call(chat, lambda: bot.send_voice(
                target, InputFile(content, filename=file.name), duration=duration, caption=caption,
                message_thread_id=thread))
        elif file.is_image:
            sent = await self._outbound.call(chat, lambda: bot.send_photo(
                target, InputFile(content, filename=file.name), caption=caption, message_thread_id=thread))
        else:
            sent = await self._outbound.call(chat, lambda: bot.send_document(
                target, InputFile(content, filename=file.name), caption=caption, message_thread_id=thread))
        return SentRef(chat, str(sent.message_id))


class Outbound:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self._reported: set[str] = set()

    async def send(self, chat: ChatRef, reply: Reply) -> SentRef:
        parts = render_parts(reply.text, monospace=reply.monospace, title=reply.title, reasoning=reply.reasoning)
        markup = keyboard(reply.buttons)
        sent_id = 0
        for i, part in enumerate(parts):
            part_markup = markup if i == len(parts) - 1 else None
            sent_id = (await self._send_part(chat, part, part_markup, quote=i == 0)).message_id
        return SentRef(chat, str(sent_id))

    async def edit(self, ref: SentRef, reply: Reply) -> None:
        parts = render_parts(reply.text, monospace=reply.monospace, title=reply.title, reasoning=reply.reasoning)
        if len(parts) > 1:  # the hub splits below max_text; only pathological rendering gets here
            log.warning("edit of %s rendered into %d parts; showing the first", ref.message_id, len(parts))
        await self._edit_part(ref.chat, int(ref.message_id), parts[0], keyboard(reply.buttons))

    async def draft(self, chat: ChatRef, draft_id: int, reply: Reply) -> None:
        """sendMessageDraft: the answer so far as the private chat's animated draft (drafts.py)."""
        part = render_parts(reply.text, monospace=reply.monospace, title=reply.title, reasoning=reply.reasoning)[0]
        await self._with_fallback(chat, part, lambda text, mode: self.bot.send_message_draft(
            int(chat.chat_id), draft_id, text, message_thread_id=_thread(chat), parse_mode=mode))

    async def typing(self, chat: ChatRef) -> None:
        await self.call(
            chat,
            lambda: self.bot.send_chat_action(
                chat_key(chat.chat_id), ChatAction.TYPING, message_thread_id=_thread(chat)
            ),
        )

    async def _send_part(
        self, chat: ChatRef, part: Rendered, markup: InlineKeyboardMarkup | None, *, quote: bool
    ) -> Message:
        quoted = None
        answered = chat.origin
        if quote and chat.is_group and isinstance(answered, ReplyTo) and answered.message_id.isdigit():
            quoted = ReplyParameters(int(answered.message_id), allow_sending_without_reply=True)

        def post(text: str, mode: str | None) -> Awaitable[Message]:
            return self.bot.send_message(
                chat_key(chat.chat_id),
                text,
                parse_mode=mode,
                message_thread_id=_thread(chat),
                reply_markup=markup,
                reply_parameters=quoted,
                link_preview_options=_NO_PREVIEW,
            )

        return await self._with_fallback(chat, part, post)

    async def _edit_part(
        self, chat: ChatRef, message_id: int, part: Rendered, markup: InlineKeyboardMarkup | None
    ) -> None:
        def post(text: str, mode: str | None) -> Awaitable[Any]:
            return self.bot.edit_message_text(
                text,
                chat_id=chat_key(chat.chat_id),
                message_id=message_id,
                parse_mode=mode,
                reply_markup=markup,
                link_preview_options=_NO_PREVIEW,
            )

        try:
            await self._with_fallback(chat, part, post)
        except SendFailed as e:
            if "not modified" not in str(e).lower():
                raise

    async def _with_fallback(
        self, chat: ChatRef, part: Rendered, post: Callable[[str, str | None], Awaitable[T]]
    ) -> T:
        """HTML first; if Telegram cannot parse our entities, the same part again as plain text."""
        try:
            return await self.call(chat, lambda: post(part.html, ParseMode.HTML))
        except SendFailed as e:
            if "can't parse entities" not in str(e).lower():
                raise
            log.warning("Telegram rejected our HTML (%s); sending plain text", e)
        return await self.call(chat, lambda: post(part.plain, None))

    async def call(self, chat: ChatRef, request: Callable[[], Awaitable[T]]) -> T:
        try:
            return await request()
        except RetryAfter as e:
            raise RateLimited(_seconds(e)) from e
        except Forbidden as e:
            raise self._unavailable(chat, e) from e
        except ChatMigrated as e:
            raise SendFailed(f"group moved to supergroup {e.new_chat_id}") from e
        except BadRequest as e:
            if any(marker in e.message.lower() for marker in _UNAVAILABLE):
                raise self._unavailable(chat, e) from e
            raise SendFailed(e.message) from e
        except TelegramError as e:
            raise SendFailed(f"{type(e).__name__}: {e.message}") from e

    def _unavailable(self, chat: ChatRef, error: TelegramError) -> ChatUnavailable:
        if chat.chat_id not in self._reported:
            self._reported.add(chat.chat_id)
            log.warning("telegram chat %s is unavailable: %s", chat.chat_id, error.message)
        return ChatUnavailable(error.message)


def _thread(chat: ChatRef) -> int | None:
    return int(chat.thread_id) if chat.thread_id and chat.thread_id.isdigit() else None


def _seconds(error: RetryAfter) -> float:
    """retry_after is an int or a timedelta depending on PTB_TIMEDELTA; read it quietly either way."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = error.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)
