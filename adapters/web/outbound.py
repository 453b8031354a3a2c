"""Fan-out of a chat's events to its open browser tabs (each tab holds one SSE stream).

With replicas, a tab may be open on a replica that does not own its chat: what the owner sends goes to its
own tabs and out on the relay (topic `web:<chat id>`), which every replica with a tab of that chat hears.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from bot.adapter import Relay, RelayEvent
from bot.httpkit import sse


def _topic(chat_id: str) -> str:
    return f"web:{chat_id}"


class Channels:
    def __init__(self, relay: Relay | None = None) -> None:
        self._relay = relay
        self._tabs: dict[str, set[asyncio.Queue[str | None]]] = defaultdict(set)
        self._unheard: dict[str, Callable[[], None]] = {}  # chat id → stop listening on its relay topic

    def open(self, chat_id: str) -> asyncio.Queue[str | None]:
        queue: asyncio.Queue[str | None] = asyncio.Queue(sse.QUEUE_LIMIT)
        self._tabs[chat_id].add(queue)
        if self._relay is not None and chat_id not in self._unheard:
            def heard(relayed: RelayEvent) -> None:
                self.publish(chat_id, str(relayed["event"]), dict(relayed["data"]))

            self._unheard[chat_id] = self._relay.listen(_topic(chat_id), heard)
        return queue

    def close(self, chat_id: str, queue: asyncio.Queue[str | None]) -> None:
        tabs = self._tabs.get(chat_id)
        if tabs is not None:
            tabs.discard(queue)
            if not tabs:
                del self._tabs[chat_id]
                if (stop := self._unheard.pop(chat_id, None)) is not None:
                    stop()

    async def share(self, chat_id: str, event: str, data: dict[str, Any]) -> None:
        """`publish` here, and to the chat's tabs on other replicas."""
        self.publish(chat_id, event, data)
        if self._relay is not None:
            await self._relay.publish(_topic(chat_id), {"event": event, "data": data})

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
