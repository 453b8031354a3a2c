"""Replies onto Feishu: every reply as a PATCHable card (plain text when cards are refused); a long stream
becomes a CardKit streaming card.

A message costs one call whether or not more is coming, so a short answer is its send and one final PATCH.
Answers side by side (a duel's columns) stay a plain card, every update one PATCH of the whole card: CardKit
streams one element at a time.
Only a stream still being written STREAM_AFTER seconds after its card went out turns into a CardKit entity
(id_convert, then one whole-card update that switches streaming on): from then on intermediate edits update
its Markdown element (the typewriter), and the final edit replaces the whole card with streaming off, in one
call.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from typing import Any, Literal

import aiohttp

from adapters.feishu import render
from adapters.feishu.transport import ApiError, FeishuHttp, data_field
from bot.adapter import ChatUnavailable, RateLimited, SendError, SendFailed
from bot.httpkit.recent import Recent
from bot.messages import ButtonPress, ChatRef, IncomingMessage, ReplyTo, SentRef
from bot.replies import Reply

log = logging.getLogger(__name__)

RATE_LIMIT_CODES = frozenset({99991400, 230020, 11232})
CHAT_GONE_CODES = frozenset({230002, 230006, 230013})
CARDKIT_RETRY_AFTER = 600.0  # after CardKit refuses, use plain cards for this long
STREAM_AFTER = 0.5  # seconds a card is shown before an intermediate edit makes it a streaming card
REMEMBERED = 2000  # messages, chats and presses kept in memory


@dataclasses.dataclass(eq=False)
class _Sent:
    """What an edit needs to know about a message we sent."""

    kind: Literal["cardkit", "card", "text"]
    chat: ChatRef
    reply: Reply
    card_id: str = ""
    sequence: int = 0
    streaming: bool = False
    sent_at: float = 0.0  # when this process sent it; 0 if an earlier one did (its entity's sequence is unknown)
    lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)

    def next_sequence(self) -> int:
        self.sequence += 1
        return self.sequence


class FeishuOutbound:
    def __init__(self, http: FeishuHttp) -> None:
        self._http = http
        self._sent: Recent[_Sent] = Recent(REMEMBERED)  # message_id → _Sent
        self._chat_is_group: Recent[bool] = Recent(REMEMBERED)  # chat_id → bool
        self._thread_anchor: Recent[str] = Recent(REMEMBERED)  # thread_id → a message id inside it (replies need one)
        self._direct_chats: Recent[str] = Recent(REMEMBERED)  # user open_id → their one-to-one chat with the bot
        self._cardkit_off_until = 0.0

    # ---- what inbound events teach us ---------------------------------------------------------
    def remember_inbound(self, msg: IncomingMessage) -> None:
        if not msg.is_button:
            self._chat_is_group.put(msg.chat_id, msg.is_group)
        if not msg.is_group and msg.chat_id != msg.user_id:
            self._direct_chats.put(msg.user_id, msg.chat_id)
        if msg.thread_id and not msg.is_button:
            self._thread_anchor.put(msg.thread_id, msg.message_id)

    def direct_chat(self, user_open_id: str) -> str:
        """The user's one-to-one chat if they have written in it; else their open_id, which sends reach too."""
        return str(self._direct_chats.get(user_open_id, user_open_id))

    async def chat_of_card(self, chat_id: str, card_message_id: str) -> tuple[bool, str | None]:
        """(is_group, thread_id) for a pressed card; asks the platform if we never saw the chat."""
        sent = self._sent.get(card_message_id)
        if sent is not None:
            return sent.chat.is_group, sent.chat.thread_id
        if chat_id not in self._chat_is_group:
            try:
                data = await self._http.call("GET", f"/open-apis/im/v1/chats/{chat_id}")
                self._chat_is_group.put(chat_id, data.get("data", {}).get("chat_mode") != "p2p")
            except (ApiError, aiohttp.ClientError, TimeoutError) as e:
                log.warning("feishu: cannot tell the kind of chat %s, assuming a group: %s", chat_id, e)
                return True, None
        return bool(self._chat_is_group[chat_id]), None

    # ---- the Adapter contract ------------------------------------------------------------------
    async def send(self, chat: ChatRef, reply: Reply, *, final: bool) -> SentRef:
        """The same card whether or not edits follow: a stream becomes a CardKit card only if it runs long."""
        message_id = ""
        for part in render.split_to_fit(reply):
            message_id = await self._send_part(chat, part)
        return SentRef(chat, message_id)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        sent = self._sent.get(ref.message_id)
        if sent is None:  # sent before a restart: every card we send is PATCHable
            sent = _Sent("card", ref.chat, Reply(text=""))
            self._sent.put(ref.message_id, sent)
        async with sent.lock:
            if reply == sent.reply and not (final and sent.streaming):
                return
            fitted = render.truncate_to_fit(reply)
            try:
                await self._apply_edit(ref.message_id, sent, fitted, final=final)
            except (ApiError, aiohttp.ClientError, TimeoutError) as e:
                raise failure(e) from e
            sent.reply = reply

    async def post(self, chat: ChatRef, msg_type: str, content: dict[str, str]) -> str:
        """One message of any type (an uploaded image or file), placed like a reply; returns its id."""
        try:
            return await self._deliver(chat, msg_type, render.dumps(content))
        except (ApiError, aiohttp.ClientError, TimeoutError) as e:
            raise failure(e) from e

    # ---- sending -------------------------------------------------------------------------------
    async def _send_part(self, chat: ChatRef, part: Reply) -> str:
        try:
            with contextlib.suppress(_CardsRefused):
                body = render.dumps(render.card(part, streaming=False))
                message_id = await self._deliver_card(chat, body)
                return self._record(message_id, _Sent("card", chat, part, sent_at=time.monotonic()))
            content = render.dumps({"text": render.plain_text(part)})
            return self._record(await self._deliver(chat, "text", content), _Sent("text", chat, part))
        except (ApiError, aiohttp.ClientError, TimeoutError) as e:
            raise failure(e) from e

    async def _deliver_card(self, chat: ChatRef, content: str) -> str:
        try:
            return await self._deliver(chat, "interactive", content)
        except ApiError as e:
            if _is_fatal(e):
                raise
            log.warning("feishu: card refused, falling back: %s", e)
            raise _CardsRefused from e

    async def _deliver(self, chat: ChatRef, msg_type: str, content: str) -> str:
        """Replies stay in their thread; in groups they quote the message they answer."""
        anchor = self._anchor(chat)
        body: dict[str, Any] = {"msg_type": msg_type, "content": content}
        if anchor and (chat.thread_id or chat.is_group):
            body["reply_in_thread"] = bool(chat.thread_id)
            answer = await self._http.call("POST", f"/open-apis/im/v1/messages/{anchor}/reply", body=body)
        else:
            body["receive_id"] = chat.chat_id
            answer = await self._http.call(
                "POST", "/open-apis/im/v1/messages", params={"receive_id_type": _receive_id_type(chat)}, body=body
            )
        return data_field(answer, "message_id")

    def _anchor(self, chat: ChatRef) -> str | None:
        """The message a reply hangs under: the one it answers (or the pressed card), else its thread's."""
        origin = chat.origin
        if isinstance(origin, ReplyTo):
            return origin.message_id
        if isinstance(origin, ButtonPress) and origin.message_id:
            return origin.message_id
        return self._thread_anchor.get(chat.thread_id) if chat.thread_id else None

    def _record(self, message_id: str, sent: _Sent) -> str:
        self._sent.put(message_id, sent)
        return message_id

    # ---- editing -------------------------------------------------------------------------------
    async def _apply_edit(self, message_id: str, sent: _Sent, reply: Reply, *, final: bool) -> None:
        if sent.kind == "card" and not final and self._runs_long(sent) and not reply.columns:
            with contextlib.suppress(_CardsRefused):
                await self._open_stream(message_id, sent, reply)
                return
        if sent.kind == "text":
            body = {"msg_type": "text", "content": render.dumps({"text": render.plain_text(reply)})}
            await self._http.call("PUT", f"/open-apis/im/v1/messages/{message_id}", body=body)
        elif sent.kind == "card":
            content = render.dumps(render.card(reply, streaming=False))
            await self._http.call("PATCH", f"/open-apis/im/v1/messages/{message_id}", body={"content": content})
        elif final or reply.buttons or reply.columns or _layout(reply) != _layout(sent.reply):
            await self._replace_card(sent, reply)  # the end of the stream, or a new layout: whole card
        else:
            if not sent.streaming:  # an edit after the stream ended opens it again
                await self._reopen_stream(sent, reply)
            update = {"content": render.markdown(reply), "sequence": sent.next_sequence()}
            path = f"/open-apis/cardkit/v1/cards/{sent.card_id}/elements/{render.ANSWER_ELEMENT}/content"
            await self._http.call("PUT", path, body=update)

    def _runs_long(self, sent: _Sent) -> bool:
        """A card this process sent, still being written STREAM_AFTER seconds on, while CardKit is not refused."""
        now = time.monotonic()
        return sent.sent_at > 0 and now - sent.sent_at >= STREAM_AFTER and now >= self._cardkit_off_until

    async def _open_stream(self, message_id: str, sent: _Sent, reply: Reply) -> None:
        """The card becomes a CardKit entity (sequence 0) and streams: two calls, once per long answer."""
        try:
            converted = await self._http.call("POST", "/open-apis/cardkit/v1/cards/id_convert",
                                              body={"message_id": message_id})
            sent.card_id = data_field(converted, "card_id")
            await self._replace_card(sent, reply, streaming=True)
        except ApiError as e:
            if _is_fatal(e):
                raise
            log.warning("feishu: CardKit refused (%s); plain cards for %.0f s", e, CARDKIT_RETRY_AFTER)
            self._cardkit_off_until = time.monotonic() + CARDKIT_RETRY_AFTER
            raise _CardsRefused from e
        sent.kind = "cardkit"

    async def _replace_card(self, sent: _Sent, reply: Reply, *, streaming: bool = False) -> None:
        """One call sets the whole content and turns streaming (the typing cursor) on or off."""
        entity = {"type": "card_json", "data": render.dumps(render.card(reply, streaming=streaming))}
        body = {"card": entity, "sequence": sent.next_sequence()}
        await self._http.call("PUT", f"/open-apis/cardkit/v1/cards/{sent.card_id}", body=body)
        sent.streaming = streaming

    async def _reopen_stream(self, sent: _Sent, reply: Reply) -> None:
        settings = {"config": {"streaming_mode": True, "summary": {"content": render.summary(reply)}}}
        body = {"settings": render.dumps(settings), "sequence": sent.next_sequence()}
        await self._http.call("PATCH", f"/open-apis/cardkit/v1/cards/{sent.card_id}/settings", body=body)
        sent.streaming = True


def _receive_id_type(chat: ChatRef) -> str:
    return "open_id" if chat.chat_id.startswith("ou_") else "chat_id"  # a menu press before any DM


class _CardsRefused(Exception):
    """This rendering was refused for its content; try the next, simpler one."""


def _is_fatal(e: ApiError) -> bool:
    """Failures a simpler rendering would not fix."""
    return e.status in (429, 403) or e.code in RATE_LIMIT_CODES | CHAT_GONE_CODES


def failure(e: Exception) -> SendError:
    if isinstance(e, ApiError):
        if e.status == 429 or e.code in RATE_LIMIT_CODES:
            return RateLimited(e.retry_after or 1.0)
        if e.status == 403 or e.code in CHAT_GONE_CODES:
            return ChatUnavailable(str(e))
    return SendFailed(str(e) or type(e).__name__)


def _layout(reply: Reply) -> tuple[str | None, bool, str]:
    """What only a whole-card update changes: the answer element alone streams."""
    return reply.title, reply.monospace, reply.reasoning
