"""Render replies as Feishu cards: CardKit streaming, else a PATCHable card, else plain text.

The contract cannot tell the hub's final edit from an intermediate one, so a streaming card is closed
lazily: `idle_close` seconds after its last edit, on the next send to the same chat or thread, and at
stop. An edit that arrives after the close simply reopens streaming (settings → streaming_mode true),
so a long pause (a slow tool call) costs two extra operations, never a lost update.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections import OrderedDict
from typing import Any, Literal

import aiohttp

from adapters.feishu import render
from adapters.feishu.transport import ApiError, FeishuHttp, data_field
from bot.adapter import ChatUnavailable, RateLimited, SendError, SendFailed
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

log = logging.getLogger(__name__)

RATE_LIMIT_CODES = frozenset({99991400, 230020, 11232})
CHAT_GONE_CODES = frozenset({230002, 230006, 230013})
CARDKIT_RETRY_AFTER = 600.0  # after CardKit refuses, use plain cards for this long
REMEMBERED = 2000  # messages, chats and presses kept in memory


class _Recent(OrderedDict[str, Any]):
    """A bounded map: the oldest entries go first."""

    def put(self, key: str, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > REMEMBERED:
            self.popitem(last=False)


@dataclasses.dataclass(eq=False)
class _Sent:
    """What an edit needs to know about a message we sent."""

    kind: Literal["cardkit", "card", "text"]
    chat: ChatRef
    reply: Reply
    card_id: str = ""
    sequence: int = 0
    streaming: bool = False
    lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)
    closer: asyncio.TimerHandle | None = None

    def next_sequence(self) -> int:
        self.sequence += 1
        return self.sequence


class FeishuOutbound:
    def __init__(self, http: FeishuHttp, idle_close: float = 3.0) -> None:
        self._http = http
        self._idle_close = idle_close
        self._sent = _Recent()  # message_id → _Sent
        self._streams: dict[tuple[str, str | None], set[str]] = {}  # chat → open streaming messages
        self._chat_is_group = _Recent()  # chat_id → bool
        self._thread_anchor = _Recent()  # thread_id → a message id inside it (replies need one)
        self._press_card = _Recent()  # button press id → message id of the card pressed
        self._unconsumed_presses: set[str] = set()
        self._cardkit_off_until = 0.0
        self._tasks: set[asyncio.Task[None]] = set()

    # ---- what inbound events teach us ---------------------------------------------------------
    def remember_inbound(self, msg: IncomingMessage) -> None:
        if not msg.is_button:
            self._chat_is_group.put(msg.chat_id, msg.is_group)
        if msg.thread_id and not msg.is_button:
            self._thread_anchor.put(msg.thread_id, msg.message_id)

    def remember_press(self, press_id: str, card_message_id: str) -> None:
        self._press_card.put(press_id, card_message_id)
        self._unconsumed_presses.add(press_id)

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
    async def send(self, chat: ChatRef, reply: Reply) -> SentRef:
        await self._close_streams(chat)
        parts = render.split_to_fit(reply)
        pressed = self._take_press(chat)
        if pressed and len(parts) == 1:
            with contextlib.suppress(SendError):  # the card may be too old or not ours: send anew
                await self.edit(SentRef(chat, pressed), reply)
                return SentRef(chat, pressed)
        message_id = ""
        for i, part in enumerate(parts):
            message_id = await self._send_part(chat, part, streamable=i == len(parts) - 1)
        return SentRef(chat, message_id)

    async def edit(self, ref: SentRef, reply: Reply) -> None:
        sent = self._sent.get(ref.message_id)
        if sent is None:  # sent before a restart: every card we send is PATCHable
            sent = _Sent("card", ref.chat, Reply(text=""))
            self._sent.put(ref.message_id, sent)
        async with sent.lock:
            if reply == sent.reply:
                return
            fitted = render.truncate_to_fit(reply)
            try:
                await self._apply_edit(ref.message_id, sent, fitted)
            except (ApiError, aiohttp.ClientError, TimeoutError) as e:
                raise _failure(e) from e
            sent.reply = reply
        if sent.streaming:
            self._arm_closer(ref.message_id, sent)

    async def stop(self) -> None:
        """Close every open stream so no card is left showing its typing cursor."""
        for sent_ids in list(self._streams.values()):
            for message_id in list(sent_ids):
                await self._close(message_id)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # ---- sending -------------------------------------------------------------------------------
    def _take_press(self, chat: ChatRef) -> str | None:
        """The card to update in place when this reply answers a button press (first reply only)."""
        if chat.reply_to is None or chat.reply_to not in self._unconsumed_presses:
            return None
        self._unconsumed_presses.discard(chat.reply_to)
        return self._press_card.get(chat.reply_to)

    async def _send_part(self, chat: ChatRef, part: Reply, *, streamable: bool) -> str:
        try:
            if streamable and not part.buttons and time.monotonic() >= self._cardkit_off_until:
                with contextlib.suppress(_CardsRefused):
                    return await self._send_cardkit(chat, part)
            with contextlib.suppress(_CardsRefused):
                body = render.dumps(render.card(part, streaming=False))
                return self._record(await self._deliver_card(chat, body), _Sent("card", chat, part))
            content = render.dumps({"text": render.plain_text(part)})
            return self._record(await self._deliver(chat, "text", content), _Sent("text", chat, part))
        except (ApiError, aiohttp.ClientError, TimeoutError) as e:
            raise _failure(e) from e

    async def _send_cardkit(self, chat: ChatRef, part: Reply) -> str:
        entity = {"type": "card_json", "data": render.dumps(render.card(part, streaming=True))}
        try:
            created = await self._http.call("POST", "/open-apis/cardkit/v1/cards", body=entity)
        except ApiError as e:
            if _is_fatal(e):
                raise
            log.warning("feishu: CardKit refused (%s); plain cards for %.0f s", e, CARDKIT_RETRY_AFTER)
            self._cardkit_off_until = time.monotonic() + CARDKIT_RETRY_AFTER
            raise _CardsRefused from e
        card_id = data_field(created, "card_id")
        message_id = await self._deliver_card(chat, render.dumps({"type": "card", "data": {"card_id": card_id}}))
        sent = _Sent("cardkit", chat, part, card_id=card_id, streaming=True)
        self._streams.setdefault((chat.chat_id, chat.thread_id), set()).add(message_id)
        self._arm_closer(message_id, sent)
        return self._record(message_id, sent)

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
                "POST", "/open-apis/im/v1/messages", params={"receive_id_type": "chat_id"}, body=body
            )
        return data_field(answer, "message_id")

    def _anchor(self, chat: ChatRef) -> str | None:
        if chat.reply_to:
            return self._press_card.get(chat.reply_to) or chat.reply_to
        return self._thread_anchor.get(chat.thread_id) if chat.thread_id else None

    def _record(self, message_id: str, sent: _Sent) -> str:
        self._sent.put(message_id, sent)
        return message_id

    # ---- editing and closing -------------------------------------------------------------------
    async def _apply_edit(self, message_id: str, sent: _Sent, reply: Reply) -> None:
        if sent.kind == "text":
            body = {"msg_type": "text", "content": render.dumps({"text": render.plain_text(reply)})}
            await self._http.call("PUT", f"/open-apis/im/v1/messages/{message_id}", body=body)
        elif sent.kind == "card":
            content = render.dumps(render.card(reply, streaming=False))
            await self._http.call("PATCH", f"/open-apis/im/v1/messages/{message_id}", body={"content": content})
        elif reply.buttons or (reply.title, reply.monospace) != (sent.reply.title, sent.reply.monospace):
            await self._replace_card(message_id, sent, reply)  # layout changed: whole card, streaming off
        else:
            if not sent.streaming:
                await self._set_streaming(sent, True, reply)
                self._streams.setdefault((sent.chat.chat_id, sent.chat.thread_id), set()).add(message_id)
            update = {"content": render.markdown(reply), "sequence": sent.next_sequence()}
            path = f"/open-apis/cardkit/v1/cards/{sent.card_id}/elements/{render.ANSWER_ELEMENT}/content"
            await self._http.call("PUT", path, body=update)

    async def _replace_card(self, message_id: str, sent: _Sent, reply: Reply) -> None:
        entity = {"type": "card_json", "data": render.dumps(render.card(reply, streaming=False))}
        body = {"card": entity, "sequence": sent.next_sequence()}
        await self._http.call("PUT", f"/open-apis/cardkit/v1/cards/{sent.card_id}", body=body)
        sent.streaming = False
        self._forget_stream(message_id, sent)

    async def _set_streaming(self, sent: _Sent, on: bool, reply: Reply) -> None:
        settings = {"config": {"streaming_mode": on, "summary": {"content": render.summary(reply)}}}
        body = {"settings": render.dumps(settings), "sequence": sent.next_sequence()}
        await self._http.call("PATCH", f"/open-apis/cardkit/v1/cards/{sent.card_id}/settings", body=body)
        sent.streaming = on

    def _arm_closer(self, message_id: str, sent: _Sent) -> None:
        if sent.closer is not None:
            sent.closer.cancel()
        loop = asyncio.get_running_loop()
        sent.closer = loop.call_later(self._idle_close, self._close_soon, message_id)

    async def _close_streams(self, chat: ChatRef) -> None:
        for message_id in list(self._streams.get((chat.chat_id, chat.thread_id), ())):
            await self._close(message_id)

    async def _close(self, message_id: str) -> None:
        sent = self._sent.get(message_id)
        if sent is None:
            return
        async with sent.lock:
            if not sent.streaming:
                return
            self._forget_stream(message_id, sent)
            try:
                await self._set_streaming(sent, False, sent.reply)
            except (ApiError, aiohttp.ClientError, TimeoutError) as e:
                log.warning("feishu: closing streaming mode of %s failed: %s", message_id, e)

    def _forget_stream(self, message_id: str, sent: _Sent) -> None:
        if sent.closer is not None:
            sent.closer.cancel()
            sent.closer = None
        key = (sent.chat.chat_id, sent.chat.thread_id)
        open_ids = self._streams.get(key, set())
        open_ids.discard(message_id)
        if not open_ids:
            self._streams.pop(key, None)

    def _close_soon(self, message_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._close(message_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


class _CardsRefused(Exception):
    """This rendering was refused for its content; try the next, simpler one."""


def _is_fatal(e: ApiError) -> bool:
    """Failures a simpler rendering would not fix."""
    return e.status in (429, 403) or e.code in RATE_LIMIT_CODES | CHAT_GONE_CODES


def _failure(e: Exception) -> SendError:
    if isinstance(e, ApiError):
        if e.status == 429 or e.code in RATE_LIMIT_CODES:
            return RateLimited(e.retry_after or 1.0)
        if e.status == 403 or e.code in CHAT_GONE_CODES:
            return ChatUnavailable(str(e))
    return SendFailed(str(e) or type(e).__name__)
