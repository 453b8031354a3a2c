"""What the hub sends and edits, gathered per request: each reply names the message it answers (its origin).

A request opens an exchange under its message id; sends and edits whose origin is that message land in it,
kept current, and — for a streamed request — go out at once as server-sent events. A send that answers no
open request (a reminder, a job's run) has nobody waiting and is dropped, logged.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from adapters.api.render import render
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

    def update(self, sent_id: str, reply: Reply, final: bool) -> None:
        shown = render(sent_id, reply)
        self.replies[sent_id] = shown
        if self.stream is not None:
            sse.offer(self.stream, sse.frame("reply", {**shown, "final": final}))

    def result(self, complete: bool) -> dict[str, Any]:
        """The response body: every reply in order, and their texts joined for callers that want one string."""
        replies = list(self.replies.values())
        return {"conversation_key": self.conversation_key, "message_id": self.message.message_id,
                "complete": complete, "text": "\n\n".join(r["text"] for r in replies), "replies": replies}


class Exchanges:
    def __init__(self) -> None:
        self._open: dict[str, Exchange] = {}

    def open(self, conversation_key: str, message: IncomingMessage,
             stream: asyncio.Queue[str | None] | None = None) -> Exchange:
        exchange = self._open[message.message_id] = Exchange(conversation_key, message, stream)
        return exchange

    def close(self, exchange: Exchange) -> None:
        self._open.pop(exchange.message.message_id, None)

    def update(self, chat: ChatRef, sent_id: str, reply: Reply, final: bool) -> None:
        origin = chat.origin
        exchange = self._open.get(origin.message_id) if isinstance(origin, ReplyTo) else None
        if exchange is None:
            log.debug("api chat %s: a reply no request is waiting for was dropped", chat.chat_id)
            return
        exchange.update(sent_id, reply, final)
