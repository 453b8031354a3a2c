"""Replies onto Slack: messages under the limit, Block Kit buttons, edits, native streams, typed errors.

An answer that streams into a thread uses Slack's own streaming (chat.startStream, then chat.appendStream with
what was added, chat.stopStream at the end), where the workspace has it; elsewhere — top-level messages,
workspaces without the methods — the first text is posted and edited with chat.update. The hub owns pacing
and retries; this module turns one call into requests and Slack's answers into RateLimited / ChatUnavailable /
SendFailed.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import render
from adapters.slack.inbound import is_direct
from adapters.slack.responses import PREFIX, Responses
from bot.adapter import ChatUnavailable, RateLimited, SendError, SendFailed
from bot.messages import ChatRef, IncomingMessage, ReplyTo, SentRef
from bot.replies import Feedback, Reply

log = logging.getLogger("bothub.slack")
T = TypeVar("T")
# answers meaning "you cannot post here" (the channel is gone or archived, the user left), not a bad request.
# not_in_channel is not among them: a slash command run where the app was never invited gets it, and inviting the
# app fixes it, so the channel must not be written off.
_UNAVAILABLE = frozenset({"channel_not_found", "is_archived", "channel_is_archived", "account_inactive",
                          "user_not_found", "restricted_action", "team_access_not_granted"})
_NO_STREAMS = frozenset({"unknown_method", "not_allowed", "method_deprecated", "feature_not_enabled"})
REMEMBERED = 4096  # inbound senders kept for streams in channels (Slack must know the recipient)


@dataclass
class _Stream:
    channel: str
    shown: str  # the markdown the stream holds so far


class SlackOutbound:
    def __init__(self, web: AsyncWebClient, team_id: Callable[[], str], streaming: bool,
                 responses: Responses) -> None:
        self.web = web
        self.responses = responses
        self._team_id = team_id
        self._streaming = streaming
        self._streams: dict[str, _Stream] = {}  # message ts → its open stream
        self._senders: OrderedDict[tuple[str, str], str] = OrderedDict()  # (channel, message ts) → user id
        # message ts → what it shows (text and blocks): an edit to the same is not made (chat.update is Tier 3,
        # and the hub's final edit often repeats the last intermediate one)
        self._shown: OrderedDict[str, str] = OrderedDict()

    def remember(self, msg: IncomingMessage) -> None:
        self._senders[(msg.chat_id, msg.message_id)] = msg.user_id
        if msg.thread_id:
            self._senders.setdefault((msg.chat_id, msg.thread_id), msg.user_id)
        while len(self._senders) > REMEMBERED:
            self._senders.popitem(last=False)

    # ---- sending ----------------------------------------------------------------------------------
    async def send(self, chat: ChatRef, reply: Reply, *, final: bool) -> SentRef:
        if not final and not reply.buttons and not reply.feedback and chat.thread_id and self._streaming:
            recipient = self._recipient(chat)
            if recipient is not None:
                ts = await self._start_stream(chat, reply, recipient)
                if ts is not None:
                    return SentRef(chat, ts)
        ts = ""
        parts = render.render_parts(reply)
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            ts = await self._post(chat, part, render.blocks(part, reply.buttons, reply.feedback) if last else None)
        return SentRef(chat, ts)

    def _recipient(self, chat: ChatRef) -> tuple[str, str] | None:
        """(user, team) a stream is for; Slack needs them in channels. None: stream not possible here."""
        origin = chat.origin
        user = self._senders.get((chat.chat_id, origin.message_id)) if isinstance(origin, ReplyTo) else None
        user = user or self._senders.get((chat.chat_id, chat.thread_id or ""))
        if user is None and not is_direct(chat.chat_id):
            return None
        return user or "", self._team_id()

    async def _start_stream(self, chat: ChatRef, reply: Reply, recipient: tuple[str, str]) -> str | None:
        extra: dict[str, Any] = {}
        if not is_direct(chat.chat_id):
            extra = {"recipient_user_id": recipient[0], "recipient_team_id": recipient[1]}
        text = render.stream_text(reply)
        try:
            answer = await self.call(chat, lambda: self.web.chat_startStream(
                channel=chat.chat_id, thread_ts=chat.thread_id or "", markdown_text=text, **extra))
        except SendFailed as e:
            if str(e) not in _NO_STREAMS:
                raise
            log.info("slack: this workspace has no native streaming (%s); editing messages instead", e)
            self._streaming = False
            return None
        ts = str(answer["ts"])
        self._streams[ts] = _Stream(chat.chat_id, text)
        return ts

    async def _post(self, chat: ChatRef, text: str, blocks: list[dict[str, Any]] | None) -> str:
        try:
            answer = await self.call(chat, lambda: self.web.chat_postMessage(
                channel=chat.chat_id, text=text, blocks=blocks, thread_ts=chat.thread_id, unfurl_links=False,
                unfurl_media=False))
        except SendFailed as e:
            key = self._outside(chat, e)
            if key is None:
                raise
            return await self.responses.post(key, text, blocks, replace=False)
        self._showing(str(answer["ts"]), text, blocks)
        return str(answer["ts"])

    def _showing(self, ts: str, text: str, blocks: list[dict[str, Any]] | None) -> bool:
        """Note what the message shows now; False if it showed exactly that already."""
        shown = json.dumps([text, blocks or []], ensure_ascii=False)
        if self._shown.get(ts) == shown:
            return False
        self._shown[ts] = shown
        self._shown.move_to_end(ts)
        while len(self._shown) > REMEMBERED:
            self._shown.popitem(last=False)
        return True

    # ---- editing ----------------------------------------------------------------------------------
    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        stream = self._streams.get(ref.message_id)
        if stream is not None:
            text = render.stream_text(reply)
            if text.startswith(stream.shown) and not (final and reply.buttons):
                await self._extend(ref, stream, text[len(stream.shown):], final=final, feedback=reply.feedback)
                return
            await self._stop(ref, stream, "")  # rewritten, or buttons at the end: the message is replaced
        parts = render.render_parts(reply)
        if len(parts) > 1:  # the hub splits below max_text; only pathological rendering gets here
            log.warning("slack: edit of %s rendered into %d parts; showing the first", ref.message_id, len(parts))
        text, blocks = parts[0], render.blocks(parts[0], reply.buttons, reply.feedback)
        if ref.message_id.startswith(PREFIX):  # posted through a response_url: replaced through it
            key = ref.message_id[len(PREFIX):]
            if not self.responses.live(key):
                raise SendFailed("response_url used up or expired")
            await self.responses.post(key, text, blocks, replace=True)
            return
        if not self._showing(ref.message_id, text, blocks):
            return
        try:
            await self.call(ref.chat, lambda: self.web.chat_update(
                channel=ref.chat.chat_id, ts=ref.message_id, text=text, blocks=blocks or []))
        except SendError as e:
            self._shown.pop(ref.message_id, None)  # not shown after all: a retry must make the call
            outside = self._outside(ref.chat, e)  # a press on a message in a channel the app is not in
            if outside is None:
                raise
            await self.responses.post(outside, text, blocks, replace=True)

    def _outside(self, chat: ChatRef, error: SendError) -> str | None:
        """The command or press whose response_url answers, when Slack refused because the app is not a member."""
        if isinstance(error, SendFailed) and str(error) == "not_in_channel":
            return self.responses.usable(chat)
        return None

    async def _extend(self, ref: SentRef, stream: _Stream, added: str, *, final: bool,
                      feedback: Feedback | None) -> None:
        if final:
            await self._stop(ref, stream, added, render.feedback_blocks(feedback))
        elif added:
            await self.call(ref.chat, lambda: self.web.chat_appendStream(
                channel=stream.channel, ts=ref.message_id, markdown_text=added))
            stream.shown += added

    async def _stop(self, ref: SentRef, stream: _Stream, added: str,
                    blocks: list[dict[str, Any]] | None = None) -> None:
        """End the stream; `blocks` (the answer's 👍/👎) show under its text."""
        await self.call(ref.chat, lambda: self.web.chat_stopStream(
            channel=stream.channel, ts=ref.message_id, markdown_text=added or None, blocks=blocks or None))
        stream.shown += added
        self._streams.pop(ref.message_id, None)

    def streaming(self, ref: SentRef) -> bool:
        return ref.message_id in self._streams

    # ---- errors -------------------------------------------------------------------------------------
    async def call(self, chat: ChatRef, request: Callable[[], Awaitable[T]]) -> T:
        try:
            return await request()
        except SlackApiError as e:
            raise typed(e, chat) from e
        except (aiohttp.ClientError, TimeoutError) as e:
            raise SendFailed(f"cannot reach Slack: {type(e).__name__}") from e


def typed(error: SlackApiError, chat: ChatRef | None = None) -> RateLimited | ChatUnavailable | SendFailed:
    response = error.response
    if response.status_code == 429:
        try:
            return RateLimited(float(response.headers.get("Retry-After", "1")))
        except ValueError:
            return RateLimited(1.0)
    code = str(response.get("error") or "unknown_error")
    if code in _UNAVAILABLE:
        log.warning("slack: %s is unavailable: %s", chat.chat_id if chat else "channel", code)
        return ChatUnavailable(code)
    return SendFailed(code)
