"""Replies onto DingTalk: every reply an AI card (createAndDeliver), edited in place; a card still being
written streams its Markdown (card/streaming) and the final edit sets the whole card, FINISHED, in one call.

Where cards are refused (the app lacks the card permissions), a reply goes as a Markdown message: through
the session webhook of the message it answers while that is fresh, else the robot OpenAPI (one-to-one
oToMessages/batchSend, group groupMessages/send). Such a message cannot be edited: its final text follows
as a new message.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from typing import Any, Literal

import aiohttp

from adapters.dingtalk import render
from adapters.dingtalk.transport import ApiError, DingTalkHttp
from bot.adapter import ChatUnavailable, RateLimited, SendError, SendFailed
from bot.httpkit.recent import Recent
from bot.messages import ChatRef, ReplyTo, SentRef
from bot.replies import Reply

log = logging.getLogger(__name__)

WEBHOOK_MARGIN_MS = 60_000  # a session webhook this close to expiry is not used
# throttling: the OpenAPI's HTTP 429, an app over its calls per second (HTTP 403, or errcode 90018 on the older
# API) and the robots' "send too fast" errcode
RATE_LIMIT_CODES = frozenset({"Throttling", "Throttling.Api", "Forbidden.AccessDenied.QpsLimitForAppkeyAndApi",
                              "Forbidden.AccessDenied.QpsLimitForApi", "90018", "130101"})
# the bot is not in the group any more, the user left or blocked it (the codes the fake and DingTalk use)
CHAT_GONE_CODES = frozenset({"chatbot.notInGroup", "robot.notInConversation", "staffId.notExisted",
                             "resource.not.found"})
CARDS_OFF_FOR = 600.0  # seconds after a card refusal during which replies go as messages


@dataclasses.dataclass(eq=False)
class _Sent:
    kind: Literal["card", "message"]
    chat: ChatRef
    reply: Reply
    streaming: bool = False
    lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)


class DingTalkOutbound:
    def __init__(self, http: DingTalkHttp, template: str, callback_type: str = "STREAM") -> None:
        self._http = http
        self._template = template
        self._callback_type = callback_type
        self._sent: Recent[_Sent] = Recent()  # outTrackId / message key → _Sent
        self._webhooks: Recent[tuple[str, int]] = Recent()  # answered message id → (session webhook, expiry ms)
        self._cards_off_until = 0.0

    def remember_webhook(self, message_id: str, url: str, expires_ms: int) -> None:
        if url:
            self._webhooks.put(message_id, (url, expires_ms))

    def chat_of(self, card_id: str) -> ChatRef | None:
        sent = self._sent.get(card_id)
        return sent.chat if sent is not None else None

    # ---- the Adapter contract ------------------------------------------------------------------
    async def send(self, chat: ChatRef, reply: Reply, *, final: bool) -> SentRef:
        parts = render.split_to_fit(reply)
        ref = ""
        try:
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                ref = await self._send_part(chat, part, final=final or not last)
        except (ApiError, aiohttp.ClientError, TimeoutError) as e:
            raise failure(e) from e
        return SentRef(chat, ref)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        sent = self._sent.get(ref.message_id)
        if sent is None:  # sent before a restart: every card we send can be updated
            sent = _Sent("card", ref.chat, Reply(text=""), streaming=True)
            self._sent.put(ref.message_id, sent)
        async with sent.lock:
            if reply == sent.reply and not (final and sent.streaming):
                return
            try:
                if sent.kind == "message":
                    if final:
                        await self._message(sent.chat, render.truncate_to_fit(reply))
                else:
                    await self._update(ref.message_id, sent, render.truncate_to_fit(reply), final=final)
            except (ApiError, aiohttp.ClientError, TimeoutError) as e:
                raise failure(e) from e
            sent.reply = reply

    async def post(self, chat: ChatRef, msg_key: str, param: dict[str, str]) -> str:
        """One robot OpenAPI message of any kind (an uploaded image or file); returns its query key."""
        try:
            return await self._robot_send(chat, msg_key, param)
        except (ApiError, aiohttp.ClientError, TimeoutError) as e:
            raise failure(e) from e

    # ---- cards -----------------------------------------------------------------------------------
    async def _send_part(self, chat: ChatRef, part: Reply, *, final: bool) -> str:
        if time.monotonic() >= self._cards_off_until:
            try:
                return await self._create_card(chat, part, final=final)
            except ApiError as e:
                if e.status in (429, 404) or e.code in RATE_LIMIT_CODES | CHAT_GONE_CODES or e.status >= 500:
                    raise
                log.warning("dingtalk: card refused (%s); Markdown messages for %.0f s", e, CARDS_OFF_FOR)
                self._cards_off_until = time.monotonic() + CARDS_OFF_FOR
        key = await self._message(chat, part)
        self._sent.put(key, _Sent("message", chat, part))
        return key

    async def _create_card(self, chat: ChatRef, reply: Reply, *, final: bool) -> str:
        track = uuid.uuid4().hex
        status = render.FINISHED if final else render.INPUTING
        body: dict[str, Any] = {
            "cardTemplateId": self._template, "outTrackId": track, "callbackType": self._callback_type,
            "cardData": {"cardParamMap": render.card_params(reply, status)},
            "imGroupOpenSpaceModel": {"supportForward": True}, "imRobotOpenSpaceModel": {"supportForward": True},
        }
        if self._callback_type == "HTTP":  # presses go to the card callback URL registered for this route key
            body["callbackRouteKey"] = self._http.client_id
        if chat.is_group:
            body["openSpaceId"] = f"dtv1.card//IM_GROUP.{chat.chat_id}"
            body["imGroupOpenDeliverModel"] = {"robotCode": self._http.client_id}
        else:
            body["openSpaceId"] = f"dtv1.card//IM_ROBOT.{chat.chat_id}"
            body["imRobotOpenDeliverModel"] = {"spaceType": "IM_ROBOT", "robotCode": self._http.client_id}
        await self._http.call("POST", "/v1.0/card/instances/createAndDeliver", body)
        self._sent.put(track, _Sent("card", chat, reply, streaming=not final))
        return track

    async def _update(self, track: str, sent: _Sent, reply: Reply, *, final: bool) -> None:
        """Intermediate text of an open stream: one streaming call. Anything else (the end, buttons, a title,
        reopening a finished card): the whole card in one call."""
        layout_same = (reply.title, reply.buttons, reply.monospace) == (sent.reply.title, (), sent.reply.monospace)
        if not final and sent.streaming and layout_same:
            body = {"outTrackId": track, "guid": uuid.uuid4().hex, "key": render.CONTENT_KEY,
                    "content": render.markdown(reply), "isFull": True, "isFinalize": False, "isError": False}
            await self._http.call("PUT", "/v1.0/card/streaming", body)
            return
        status = render.FINISHED if final else render.INPUTING
        body = {"outTrackId": track, "cardData": {"cardParamMap": render.card_params(reply, status)},
                "cardUpdateOptions": {"updateCardDataByKey": True}}
        await self._http.call("PUT", "/v1.0/card/instances", body)
        sent.streaming = not final

    # ---- Markdown messages -----------------------------------------------------------------------
    async def _message(self, chat: ChatRef, reply: Reply) -> str:
        content = render.message(reply)
        webhook = self._webhook_for(chat)
        if webhook:
            await self._http.post_webhook(webhook, {"msgtype": "markdown", "markdown": content})
            return f"webhook-{uuid.uuid4().hex}"
        return await self._robot_send(chat, "sampleMarkdown", content)

    def _webhook_for(self, chat: ChatRef) -> str:
        answered = chat.origin.message_id if isinstance(chat.origin, ReplyTo) else None
        found = self._webhooks.get(answered) if answered else None
        if found is None:
            return ""
        url, expires_ms = found
        return str(url) if expires_ms - time.time() * 1000 > WEBHOOK_MARGIN_MS else ""

    async def _robot_send(self, chat: ChatRef, msg_key: str, param: dict[str, str]) -> str:
        body: dict[str, Any] = {"robotCode": self._http.client_id, "msgKey": msg_key, "msgParam": render.dumps(param)}
        if chat.is_group:
            body["openConversationId"] = chat.chat_id
            answer = await self._http.call("POST", "/v1.0/robot/groupMessages/send", body)
        else:
            body["userIds"] = [chat.chat_id]
            answer = await self._http.call("POST", "/v1.0/robot/oToMessages/batchSend", body)
        key = answer.get("processQueryKey")
        return key if isinstance(key, str) and key else f"sent-{uuid.uuid4().hex}"


def failure(e: Exception) -> SendError:
    if isinstance(e, ApiError):
        if e.status == 429 or e.code in RATE_LIMIT_CODES:
            return RateLimited(e.retry_after or 1.0)
        if e.code in CHAT_GONE_CODES:
            return ChatUnavailable(str(e))
    return SendFailed(str(e) or type(e).__name__)
