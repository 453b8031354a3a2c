"""What the hub sends and edits, gathered per request: each reply names the message it answers (its origin).

A request opens an exchange under its message id; sends and edits whose origin is that message land in it,
kept current, and — for a streamed request — go out at once as server-sent events. A send that answers no
open request (a reminder, a job's run) has nobody waiting and is dropped, logged.

With replicas, the chat's owner answers a request another replica received: a reply to a request not open
here goes out on the relay (topic `api:<message id>`), and the replica holding the request applies it as
its own; a reply relayed to nobody is dropped there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from adapters.api.render import render
from bot.adapter import Relay, RelayEvent
from bot.httpkit import sse
from bot.messages import ChatRef, IncomingMessage, ReplyTo
from bot.replies import Reply

log = logging.getLogger("bothub.api")


class Exchange:
    def __init__(self, conversation_key: str, message: IncomingMessage,
                 stream: asyncio.Queue[str | None] | None) -> None:
        self.conversation_key = conversation_key
        self.message = message
        self.stream = stream
        self.replies: dict[str, dict[str, Any]] = {}  # sent id → the reply as it reads now, in send order
        self.trace_id: str | None = None  # the run that wrote the answer, once it is stored

    def update(self, sent_id: str, reply: Reply, final: bool) -> None:
        self.show(render(sent_id, reply), final)

    def show(self, shown: dict[str, Any], final: bool) -> None:
        self.replies[str(shown["id"])] = shown
        if self.stream is not None:
            sse.offer(self.stream, sse.frame("reply", {**shown, "final": final}))

    def result(self, complete: bool) -> dict[str, Any]:
        """The response body: every reply in order, and their texts joined for callers that want one string."""
        replies = list(self.replies.values())
        return {"conversation_key": self.conversation_key, "message_id": self.message.message_id,
                "complete": complete, "text": "\n\n".join(r["text"] for r in replies), "replies": replies,
                "trace_id": self.trace_id}


def _topic(message_id: str) -> str:
    return f"api:{message_id}"


class Exchanges:
    def __init__(self, relay: Relay | None) -> None:
        self._relay = relay
        self._open: dict[str, Exchange] = {}
        self._unheard: dict[str, Callable[[], None]] = {}  # message id → stop listening on its relay topic

    def open(self, conversation_key: str, message: IncomingMessage,
             stream: asyncio.Queue[str | None] | None = None) -> Exchange:
        exchange = self._open[message.message_id] = Exchange(conversation_key, message, stream)
        if self._relay is not None:
            def heard(event: RelayEvent) -> None:
                exchange.show(event["reply"], bool(event["final"]))

            self._unheard[message.message_id] = self._relay.listen(_topic(message.message_id), heard)
        return exchange

    def close(self, exchange: Exchange) -> None:
        self._open.pop(exchange.message.message_id, None)
        if (stop := self._unheard.pop(exchange.message.message_id, None)) is not None:
            stop()

    async def update(self, chat: ChatRef, sent_id: str, reply: Reply, final: bool) -> None:
        origin = chat.origin
        asked = origin.message_id if isinstance(origin, ReplyTo) else None
        exchange = self._open.get(asked) if asked is not None else None
        if exchange is not None:
            exchange.update(sent_id, reply, final)
        elif asked is not None and self._relay is not None:
            await self._relay.publish(_topic(asked), {"reply": render(sent_id, reply), "final": final})
        else:
            log.debug("api chat %s: a reply no request is waiting for was dropped", chat.chat_id)
