"""The encrypted callback mode: WeCom POSTs each message to the bot's URL and polls for its stream.

Every request carries msg_signature, timestamp and nonce; a GET is the console's URL check (its `echostr`
is decrypted and echoed), a POST holds {"encrypt"}. A message is answered at once with an open stream
(an id, no content); WeCom then polls with `msgtype: stream` refreshes, answered with the stream's text as
the hub has written it so far, until `finish`. A reply with no stream left to fill (a second reply, a card
press, the stream's time over) goes once through the message's `response_url`; after that the message can
take no more (proactive sends need the long connection).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import secrets
import time
import uuid
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web

from adapters.wecom import crypto, render
from adapters.wecom.outbound import STREAM_WINDOW
from bot.adapter import SendFailed
from bot.httpkit.recent import Recent
from bot.messages import ButtonPress, ChatRef, ReplyTo, SentRef
from bot.replies import Reply

if TYPE_CHECKING:
    from adapters.wecom.adapter import WeComAdapter

log = logging.getLogger(__name__)


@dataclasses.dataclass(eq=False)
class _Poll:
    stream_id: str
    started: float
    content: str = ""
    finish: bool = False
    claimed: bool = False


class CallbackMode:
    clock = staticmethod(time.monotonic)

    def __init__(self, token: str, encoding_aes_key: str) -> None:
        self._token = token
        self._key = crypto.key_of(encoding_aes_key)
        self.session: aiohttp.ClientSession | None = None
        self._polls: Recent[_Poll] = Recent()  # msgid and stream id → its stream
        self._urls: Recent[str] = Recent()  # msgid → its unused response_url

    # ---- requests from WeCom ---------------------------------------------------------------------
    async def handle(self, request: web.Request, adapter: WeComAdapter) -> web.StreamResponse:
        q = request.query
        sig, stamp, nonce = q.get("msg_signature", ""), q.get("timestamp", ""), q.get("nonce", "")
        if request.method == "GET":
            echo = q.get("echostr", "")
            try:
                crypto.check(self._token, stamp, nonce, echo, sig)
                return web.Response(text=crypto.decrypt(self._key, echo))
            except crypto.CryptoError as e:
                log.warning("wecom: URL check refused: %s", e)
                return web.Response(status=403, text="signature")
        try:
            outer = json.loads(await request.read())
            encrypted = outer.get("encrypt") if isinstance(outer, dict) else None
        except ValueError:
            encrypted = None
        if not isinstance(encrypted, str):
            return web.Response(status=400, text="no encrypt")
        try:
            crypto.check(self._token, stamp, nonce, encrypted, sig)
            body = json.loads(crypto.decrypt(self._key, encrypted))
        except (crypto.CryptoError, ValueError) as e:
            log.warning("wecom: callback refused: %s", e)
            return web.Response(status=403, text="signature")
        if not isinstance(body, dict):
            return web.Response(status=400, text="not an object")
        if not adapter.connected():
            return web.Response(status=503, text="starting")  # WeCom tries again
        try:
            answer = await self._answer(body, adapter)
        except Exception:  # not kept: WeCom tries again
            log.exception("wecom: handling a callback failed")
            return web.Response(status=503)
        return self._sealed(answer) if answer is not None else web.Response(text="")

    async def _answer(self, body: dict[str, Any], adapter: WeComAdapter) -> dict[str, Any] | None:
        kind = body.get("msgtype")
        raw_id = body.get("msgid")
        msgid = raw_id if isinstance(raw_id, str) else ""
        if kind == "stream":
            stream = body.get("stream")
            poll = self._polls.get(str(stream.get("id", ""))) if isinstance(stream, dict) else None
            return _stream(poll) if poll is not None else None
        url = body.get("response_url")
        if msgid and isinstance(url, str) and url.startswith(("https://", "http://")) and msgid not in self._urls:
            self._urls.put(msgid, url)
        if kind == "event":
            event = await adapter.take_event(body, msgid)
            if event is not None and event.kind == "enter_chat":
                return {"msgtype": "text", "text": {"content": adapter.welcome()}}
            return None
        if msgid and (known := self._polls.get(msgid)) is not None:
            return _stream(known)  # a redelivery: the stream already answering it
        if await adapter.take_message(body, msgid) is None:
            return None
        poll = _Poll(uuid.uuid4().hex, self.clock())
        self._polls.put(msgid, poll)
        self._polls.put(poll.stream_id, poll)
        return _stream(poll)

    def _sealed(self, answer: dict[str, Any]) -> web.Response:
        encrypted = crypto.encrypt(self._key, json.dumps(answer, ensure_ascii=False))
        stamp, nonce = str(int(time.time())), secrets.token_hex(8)
        return web.json_response({"encrypt": encrypted, "timestamp": stamp, "nonce": nonce,
                                  "msgsignature": crypto.signature(self._token, stamp, nonce, encrypted)})

    # ---- replies -----------------------------------------------------------------------------------
    async def send(self, chat: ChatRef, reply: Reply, *, final: bool) -> SentRef:
        msgid = _answered(chat)
        parts = render.split_to_fit(reply)
        poll = self._polls.get(msgid)
        if poll is not None and not poll.claimed and self._fresh(poll) and not reply.buttons:
            poll.claimed, poll.content = True, render.markdown(parts[0])
            poll.finish = final or len(parts) > 1
            if len(parts) > 1:
                await self._once(chat, msgid, Reply("\n\n".join(p.text for p in parts[1:])))
            return SentRef(chat, poll.stream_id)
        return await self._once(chat, msgid, reply)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        poll = self._polls.get(ref.message_id)
        if poll is not None and not poll.finish and self._fresh(poll):
            poll.content, poll.finish = render.markdown(render.truncate_to_fit(reply)), final
        elif final and (poll is None or poll.content != render.markdown(render.truncate_to_fit(reply))):
            if poll is not None:
                poll.finish = True
            await self._once(ref.chat, _answered(ref.chat), reply)

    def _fresh(self, poll: _Poll) -> bool:
        return self.clock() - poll.started < STREAM_WINDOW - 30.0

    async def _once(self, chat: ChatRef, msgid: str, reply: Reply) -> SentRef:
        """The message's response_url, used once: Markdown, or a card for buttons."""
        url = self._urls.pop(msgid, None)
        if url is None or self.session is None:
            raise SendFailed("WeCom callback mode: this message takes no more replies (use the long connection)")
        fitted = render.truncate_to_fit(reply)
        body: dict[str, Any] = ({"msgtype": "template_card", "template_card": render.card(fitted)} if reply.buttons
                                else {"msgtype": "markdown", "markdown": {"content": render.markdown(fitted)}})
        try:
            async with self.session.post(url, json=body) as resp:
                answer = await resp.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as e:
            raise SendFailed(f"WeCom response_url failed: {e}") from e
        if not isinstance(answer, dict) or answer.get("errcode", 0):
            raise SendFailed(f"WeCom response_url refused the reply: {answer}")
        return SentRef(chat, f"url-{uuid.uuid4().hex}")


def _answered(chat: ChatRef) -> str:
    if isinstance(chat.origin, ReplyTo):
        return chat.origin.message_id
    return chat.origin.press_id if isinstance(chat.origin, ButtonPress) else ""


def _stream(poll: _Poll) -> dict[str, Any]:
    return {"msgtype": "stream", "stream": {"id": poll.stream_id, "finish": poll.finish, "content": poll.content}}
