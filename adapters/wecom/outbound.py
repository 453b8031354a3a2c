"""Replies onto WeCom over the long connection: answers are stream messages on the req_id of the message they
answer, edited by resending the same stream id until `finish`; buttons ride in template cards.

WeCom drops a stream not finished within STREAM_WINDOW of its start, so an answer still being written then
is finished where it stands and its final text follows as a new message. Where no fresh req_id answers the
chat (a scheduled message, a second reply to a press, a req_id WeCom no longer takes), a reply is pushed
proactively (aibot_send_msg), which cannot be edited: its final text follows as a new message. A press's
first reply replaces the pressed card (aibot_respond_update_msg, the only answer a card event's req_id takes).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from typing import Any, Literal

import aiohttp

from adapters.wecom import render
from adapters.wecom.longconn import AckError, LongConnection
from bot.adapter import ChatUnavailable, RateLimited, SendError, SendFailed
from bot.httpkit.recent import Recent
from bot.messages import ButtonPress, ChatRef, ReplyTo, SentRef
from bot.replies import Reply

STREAM_WINDOW = 360.0  # seconds WeCom keeps a stream open
STREAM_MARGIN = 30.0  # finish this long before WeCom would drop it
REPLY_WINDOW = 24 * 3600.0  # a callback's req_id takes replies this long
RATE_LIMITED = frozenset({45009, 45033})  # API calls over the limit; too many concurrent calls
CHAT_GONE = frozenset({60011, 60020, 86008})  # no permission for the chat; the bot is not (any more) in it
REQ_ID_GONE = frozenset({846605, 846608})  # invalid req_id; the stream's update time is over


@dataclasses.dataclass(eq=False)
class _Sent:
    kind: Literal["stream", "card", "pushed"]
    chat: ChatRef
    reply: Reply
    req_id: str = ""
    started: float = 0.0
    open: bool = False
    lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)


class WeComOutbound:
    clock = staticmethod(time.monotonic)

    def __init__(self, conn: LongConnection) -> None:
        self.conn = conn
        self._sent: Recent[_Sent] = Recent()  # stream id / task id / push key → what it shows
        self._reqs: Recent[tuple[str, float]] = Recent()  # answered msgid → (its req_id, when it came)
        self._pressed: Recent[bool] = Recent()  # press req_ids whose card was replaced already

    def remember(self, msgid: str, req_id: str) -> None:
        self._reqs.put(msgid, (req_id, self.clock()))

    # ---- the Adapter contract ------------------------------------------------------------------
    async def send(self, chat: ChatRef, reply: Reply, *, final: bool) -> SentRef:
        parts = render.split_to_fit(reply)
        ref = ""
        for i, part in enumerate(parts):
            ref = await self._send_part(chat, part, final=final or i < len(parts) - 1)
        return SentRef(chat, ref)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        press = ref.chat.origin
        if isinstance(press, ButtonPress) and press.message_id == ref.message_id:
            await self._replace(ref.chat, press, reply)
            return
        sent = self._sent.get(ref.message_id)
        if sent is None:  # sent before a restart: its stream is gone, the final text goes anew
            if final:
                await self.send(ref.chat, reply, final=True)
            return
        async with sent.lock:
            if reply == sent.reply and not (final and sent.open):
                return
            fitted = render.truncate_to_fit(reply)
            try:
                if sent.open and self.clock() - sent.started < STREAM_WINDOW - STREAM_MARGIN:
                    await self._stream(sent, ref.message_id, fitted, finish=final)
                    sent.reply = reply
                    return
                if sent.open:  # about to be dropped: finished as it stands
                    await self._stream(sent, ref.message_id, render.truncate_to_fit(sent.reply), finish=True)
            except _ReqGone:
                sent.open = False
            if final:
                await self._fresh(sent.chat, fitted)
            sent.reply = reply

    # ---- parts -----------------------------------------------------------------------------------
    async def _send_part(self, chat: ChatRef, part: Reply, *, final: bool) -> str:
        if part.buttons:
            if not render.card_holds(part):
                await self._fresh(chat, dataclasses.replace(part, buttons=()))
            return await self._card(chat, part)
        req = self._req_for(chat)
        if req:
            stream_id = uuid.uuid4().hex
            sent = _Sent("stream", chat, part, req, self.clock(), open=True)
            try:
                await self._stream(sent, stream_id, part, finish=final)
            except _ReqGone:
                return await self._push(chat, {"msgtype": "markdown", "markdown": {"content": render.markdown(part)}},
                                        part)
            self._sent.put(stream_id, sent)
            return stream_id
        return await self._push(chat, {"msgtype": "markdown", "markdown": {"content": render.markdown(part)}}, part)

    async def _fresh(self, chat: ChatRef, reply: Reply) -> None:
        """A new message with the reply's text, never replacing anything."""
        await self.send(dataclasses.replace(chat, origin=_unpressable(chat)), reply, final=True)

    async def _stream(self, sent: _Sent, stream_id: str, reply: Reply, *, finish: bool) -> None:
        body = {"msgtype": "stream", "stream": {"id": stream_id, "finish": finish, "content": render.markdown(reply)}}
        await self._call("aibot_respond_msg", body, sent.req_id)
        sent.open = not finish

    async def _replace(self, chat: ChatRef, press: ButtonPress, reply: Reply) -> None:
        """The pressed card becomes the answer: once, within the event's window, if the card holds it."""
        pressed_id = press.message_id or ""
        pressed = self._sent.get(pressed_id)
        if self._pressed.get(press.press_id) or not render.card_holds(reply) or pressed is None:
            raise SendFailed("the pressed card cannot take this answer")  # the hub sends it anew
        card = render.card(reply, pressed_id, pressed.reply.buttons)
        body = {"response_type": "update_template_card", "template_card": card}
        await self._call("aibot_respond_update_msg", body, press.press_id)
        self._pressed.put(press.press_id, True)
        self._sent.put(pressed_id, _Sent("card", chat, dataclasses.replace(reply, buttons=pressed.reply.buttons)))

    async def _card(self, chat: ChatRef, reply: Reply) -> str:
        card = render.card(reply)
        await self.post(chat, {"msgtype": "template_card", "template_card": card})
        self._sent.put(card["task_id"], _Sent("card", chat, reply))
        if extra := render.overflow(reply):
            await self._fresh(chat, Reply(extra))
        return str(card["task_id"])

    async def _push(self, chat: ChatRef, body: dict[str, Any], reply: Reply) -> str:
        await self._call("aibot_send_msg", {**_address(chat), **body})
        key = f"push-{uuid.uuid4().hex}"
        self._sent.put(key, _Sent("pushed", chat, reply))
        return key

    def _req_for(self, chat: ChatRef) -> str:
        answered = chat.origin.message_id if isinstance(chat.origin, ReplyTo) else None
        found = self._reqs.get(answered) if answered else None
        if found is None or self.clock() - found[1] > REPLY_WINDOW:
            return ""
        return found[0]

    async def post(self, chat: ChatRef, body: dict[str, Any]) -> SentRef:
        """One message of any kind (an uploaded image or file): a reply while the req_id is fresh, else pushed."""
        req = self._req_for(chat)
        try:
            if not req:
                raise _ReqGone
            await self._call("aibot_respond_msg", body, req)
        except _ReqGone:
            await self._call("aibot_send_msg", {**_address(chat), **body})
        return SentRef(chat, f"media-{uuid.uuid4().hex}")

    async def call(self, cmd: str, body: dict[str, Any]) -> dict[str, Any]:
        """One request on a fresh req_id; its ack (with any body), or a SendError."""
        try:
            return await self.conn.request(cmd, body)
        except AckError as e:
            raise failure(e) from e
        except (ConnectionError, aiohttp.ClientError, TimeoutError) as e:
            raise failure(e) from e

    async def _call(self, cmd: str, body: dict[str, Any], rid: str = "") -> None:
        try:
            await self.conn.request(cmd, body, rid)
        except AckError as e:
            if e.errcode in REQ_ID_GONE and cmd == "aibot_respond_msg":
                raise _ReqGone from e
            raise failure(e) from e
        except (ConnectionError, aiohttp.ClientError, TimeoutError) as e:
            raise failure(e) from e


class _ReqGone(Exception):
    """WeCom no longer takes replies on this req_id: the reply is pushed instead."""


def _unpressable(chat: ChatRef) -> ReplyTo | None:
    return chat.origin if isinstance(chat.origin, ReplyTo) else None


def _address(chat: ChatRef) -> dict[str, Any]:
    return {"chatid": chat.chat_id, "chat_type": 2 if chat.is_group else 1}


def failure(e: Exception) -> SendError:
    if isinstance(e, AckError):
        if e.errcode in RATE_LIMITED:
            return RateLimited(1.0)
        if e.errcode in CHAT_GONE:
            return ChatUnavailable(str(e))
    return SendFailed(str(e) or type(e).__name__)
