""""typing…" while a run has nothing to show yet, or a tool runs: what a person expects of a chat partner."""

from __future__ import annotations

import asyncio
import contextlib

from bot.delivery.sending import TYPING_EVERY, Delivery
from bot.delivery.stream import HeldReply, StreamWriter
from bot.messages import ChatRef

TYPING_AFTER = 0.5  # seconds of silence before "typing…": an answer visible sooner saves the platform call


class TypingIndicator:
    """Shows "typing…" while the model thinks (nothing visible yet after TYPING_AFTER) or a tool runs."""

    def __init__(self, delivery: Delivery, chat: ChatRef, stream: StreamWriter | HeldReply) -> None:
        self.tool_running = False
        self._task = asyncio.create_task(self._loop(delivery, chat, stream))

    async def _loop(self, delivery: Delivery, chat: ChatRef, stream: StreamWriter | HeldReply) -> None:
        if isinstance(stream, HeldReply):
            return  # a run that may stay silent must not show "typing…" either
        with contextlib.suppress(Exception):
            await asyncio.sleep(TYPING_AFTER)
            while True:
                if not stream.visible or self.tool_running:
                    await delivery.typing(chat)
                await asyncio.sleep(TYPING_EVERY)

    def cancel(self) -> None:
        self._task.cancel()
