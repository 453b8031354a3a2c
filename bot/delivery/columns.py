"""Several answers growing side by side in one message, where the platform shows columns (Capabilities.columns):
one send, then paced edits of the whole message, the last one final with each column's buttons.

One message means one edit budget, whatever the number of answers: the platform's per-message update limit holds
as for a single answer. Each column gets an equal share of the message's limit; while streaming a column shows the
first part of its answer (a prefix that no longer changes once it is full), and an answer longer than its share
continues after the message in messages of its own, its buttons under the last. Thinking is not shown in columns
(it stays in each run's trace).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence

from bot.delivery.sending import Delivery
from bot.delivery.stream import FIRST_SEND_WAIT
from bot.messages import ChatRef, SentRef
from bot.replies import Button, Column, Reply, split_text

Buttons = tuple[tuple[Button, ...], ...]
WAITING = "…"  # what a column shows before its first words
MIN_SHARE = 200  # characters a column keeps at least (a platform with columns has room for them)


class ColumnStream:
    def __init__(self, delivery: Delivery, chat: ChatRef, title: str, heads: Sequence[str]) -> None:
        self._d, self._chat, self._title = delivery, chat, title
        self._heads = list(heads)
        self._texts = [""] * len(heads)
        caps = delivery.caps
        self._interval = caps.group_edit_interval if chat.is_group else caps.edit_interval
        room = caps.max_text - len(title) - sum(len(h) + 2 for h in heads)
        self._share = max(MIN_SHARE, room // max(1, len(heads)))
        self._ref: SentRef | None = None
        self._shown: Reply | None = None
        self._last = 0.0
        self._flusher: asyncio.Task[None] | None = None
        self._sending = False

    def feed(self, column: int, delta: str) -> None:
        self._texts[column] += delta
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())

    def feed_reasoning(self, column: int, delta: str) -> None:
        """Thinking is not shown in columns: each run's trace keeps it."""

    def _parts(self, column: int) -> list[str]:
        return split_text(self._texts[column], self._share) if self._texts[column].strip() else []

    def _reply(self, buttons: Sequence[Buttons]) -> Reply:
        columns = []
        for i, head in enumerate(self._heads):
            parts = self._parts(i)
            shown = parts[0] if parts else ("" if buttons else WAITING)
            columns.append(Column(head, shown, buttons[i] if buttons and len(parts) < 2 else ()))
        return Reply("", self._title, columns=tuple(columns))

    async def _flush(self) -> None:
        # as StreamWriter: the first words at once, later updates no faster than the platform's edit interval
        wait = self._last + self._interval - time.monotonic() if self._ref else FIRST_SEND_WAIT
        if wait > 0:
            await asyncio.sleep(wait)
        self._sending = True
        try:
            await self._show(self._reply(()), final=False)
        finally:
            self._sending = False
            self._last = time.monotonic()

    async def _show(self, reply: Reply, *, final: bool) -> None:
        if self._ref is None:
            self._ref = await (self._d.send if final else self._d.send_if_budget)(self._chat, reply)
            self._shown = reply if self._ref is not None else None
        elif ((reply != self._shown or (final and self._d.caps.closes_streams))
              and await self._d.edit(self._ref, reply, final=final) is not None):
            self._shown = reply

    async def finish(self, texts: Sequence[str], buttons: Sequence[Buttons]) -> None:
        """The final message: each column's whole answer (its overflow in messages after it), with its buttons."""
        if self._flusher is not None and not self._flusher.done():
            if self._sending:  # a request is in flight: let it land so the message id is known
                with contextlib.suppress(Exception):
                    await self._flusher
            else:
                self._flusher.cancel()
        self._texts = list(texts)
        await self._show(self._reply(buttons), final=True)
        for i, head in enumerate(self._heads):
            rest = self._parts(i)[1:]
            for j, text in enumerate(rest):
                await self._d.send(self._chat, Reply(text, head if j == 0 else None,
                                                     buttons[i] if j == len(rest) - 1 else ()))
