"""Fan-out of a chat's events to its open browser tabs (each tab holds one SSE stream)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from bot.httpkit import sse


class Channels:
    def __init__(self) -> None:
        self._tabs: dict[str, set[asyncio.Queue[str | None]]] = defaultdict(set)

    def open(self, chat_id: str) -> asyncio.Queue[str | None]:
        queue: asyncio.Queue[str | None] = asyncio.Queue(sse.QUEUE_LIMIT)
        self._tabs[chat_id].add(queue)
        return queue

    def close(self, chat_id: str, queue: asyncio.Queue[str | None]) -> None:
        tabs = self._tabs.get(chat_id)
        if tabs is not None:
            tabs.discard(queue)
            if not tabs:
                del self._tabs[chat_id]

    def publish(self, chat_id: str, event: str, data: dict[str, Any]) -> int:
        """Queue one SSE event for every tab of the chat; returns how many tabs got it."""
        text = sse.frame(event, data)
        tabs = list(self._tabs.get(chat_id, ()))
        for queue in tabs:
            if not sse.offer(queue, text):
                self.close(chat_id, queue)
        return len(tabs)

    def shut(self) -> None:
        """End every stream (server stopping)."""
        for chat_id, tabs in list(self._tabs.items()):
            for queue in list(tabs):
                self.close(chat_id, queue)
                sse.end(queue)
