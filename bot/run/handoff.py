"""A run's last step, the delivery hand-off: the answer streams into the chat as it grows, "typing…" shows
while nothing does, and the end of the run (an answer, a failure, a cut) is delivered in full."""

from __future__ import annotations

import contextlib
import logging
import time

from bot.agent.events import RunFailed
from bot.delivery import Delivery, HeldReply, StreamWriter
from bot.delivery.typing import TypingIndicator
from bot.i18n import t
from bot.replies import Button, Feedback, Reply
from bot.run.turn import TurnContext

log = logging.getLogger("bothub.runner")

QUIET_AFTER_FAILURE = 60.0  # seconds during which a chat gets no second "provider failed" message


class ReplyOut:
    """One run's reply: streamed (or held back, for a run that may stay silent) as the model writes it."""

    def __init__(self, delivery: Delivery, turn: TurnContext) -> None:
        ticket = turn.ticket
        self._turn = turn
        self._stream: StreamWriter | HeldReply = (
            HeldReply(delivery, turn.chat, turn.silent_reply) if turn.silent_reply
            else StreamWriter(delivery, turn.chat, ticket.replies, ticket.sent) if ticket
            else StreamWriter(delivery, turn.chat))
        self._typing = TypingIndicator(delivery, turn.chat, self._stream)

    def feed(self, text: str) -> None:
        self._stream.feed(text)

    def reason(self, text: str) -> None:
        self._stream.feed_reasoning(text)

    def tool(self, running: bool) -> None:
        self._typing.tool_running = running

    def stop_typing(self) -> None:
        self._typing.cancel()

    async def finish(self, text: str | None = None, feedback: Feedback | None = None) -> None:
        """The complete answer (or everything fed) is what the chat shows, with the 👍/👎 naming its node where the
        platform draws them."""
        await self._stream.finish(text, feedback=feedback)

    async def cut(self, partial: str) -> None:
        """A stopped or timed-out run: what was shown ends with the note that it was cut short (a run that may
        stay silent, a heartbeat, does not announce it)."""
        if self._turn.silent_reply is not None:
            return
        note = t(self._turn.lang, "interrupted")
        with contextlib.suppress(Exception):
            await self._stream.finish(f"{partial}\n\n{note}" if partial.strip() else note)


class FailureNotices:
    """The polite "the model failed" line, at most once per QUIET_AFTER_FAILURE in a chat."""

    def __init__(self) -> None:
        self._last: dict[str, float] = {}

    def succeeded(self, chat_key: str) -> None:
        self._last.pop(chat_key, None)

    async def report(self, chat_key: str, event: RunFailed, turn: TurnContext, delivery: Delivery) -> None:
        log.warning("run failed in %s: %s (%s) %s", chat_key, event.kind, event.error_id, event.detail)
        if turn.silent_reply is not None:
            return  # nobody asked for a heartbeat: its failures go to the log, not the chat
        now = time.monotonic()
        last = self._last.get(chat_key)
        self._last[chat_key] = now
        if last is not None and now - last < QUIET_AFTER_FAILURE:
            return
        reason = t(turn.lang, event.kind.reason)
        retry = Button(t(turn.lang, "retry_button"), "/retry")  # one press, where buttons exist
        await delivery.send(turn.chat, Reply(t(turn.lang, "llm_failed", reason=reason, error_id=event.error_id),
                                             buttons=((retry,),)))
