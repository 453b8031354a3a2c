"""The fake Bot API's update feed: what getUpdates long polling or a webhook delivers, and what it never does.

Telegram filters by `allowed_updates` when an update is created, using the setting in force (the last
getUpdates or setWebhook that named one; never named or empty means every type except chat_member,
message_reaction and message_reaction_count). A filtered update is dropped for good: a bot that forgot
`callback_query` never sees a button press, so tests see it in `dropped` instead.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

NOT_BY_DEFAULT = frozenset({"chat_member", "message_reaction", "message_reaction_count"})


class UpdateFeed:
    def __init__(self) -> None:
        self.allowed: list[str] = []  # the setting in force
        self.dropped: list[dict[str, Any]] = []  # created while their type was not allowed
        self.confirmed = 0  # highest update_id the bot confirmed with a later offset
        self._pending: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()
        self._ids = itertools.count(1)

    def allow(self, allowed_updates: Any) -> None:
        """getUpdates/setWebhook: a list replaces the setting; leaving it out keeps the previous one."""
        if allowed_updates is not None:
            self.allowed = list(allowed_updates)

    def accepts(self, kind: str) -> bool:
        return kind in self.allowed if self.allowed else kind not in NOT_BY_DEFAULT

    def create(self, update: dict[str, Any]) -> dict[str, Any] | None:
        """Number an update; None when the setting in force filters it out (it is gone, as on Telegram)."""
        update = {"update_id": next(self._ids), **update}
        [kind] = [key for key in update if key != "update_id"]
        if not self.accepts(kind):
            self.dropped.append(update)
            return None
        return update

    def queue(self, update: dict[str, Any]) -> None:
        self._pending.append(update)
        self._arrived.set()

    def take_all(self) -> list[dict[str, Any]]:
        """Hand everything queued to a webhook (setWebhook)."""
        pending, self._pending = self._pending, []
        return pending

    def drop_pending(self) -> None:
        self._pending = []

    @property
    def unconfirmed(self) -> int:
        """Updates queued that the bot has not confirmed yet (fetched or not)."""
        return len(self._pending)

    async def poll(self, offset: int, limit: int, hold: float) -> list[dict[str, Any]]:
        """getUpdates: an offset confirms every earlier update; then hold the request up to `hold` seconds."""
        self.confirmed = max(self.confirmed, offset - 1)
        self._pending = [u for u in self._pending if u["update_id"] >= offset]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + hold
        while not self._pending and (remaining := deadline - loop.time()) > 0:
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except TimeoutError:
                break
        return self._pending[:limit]
