"""What each model request cost, per UTC day, chat, user and model: recorded as the answer streams, stored in
batches off its path, and read back (with what is not stored yet) by /usage and the dashboard."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, date, datetime

from bot.agent.batches import BatchWriter
from bot.agent.modelapi import Usage
from bot.store.usage import UsageRecord, UsageStore, UsageTotals

log = logging.getLogger("bothub.usage")


def user_key(platform: str, user_id: str) -> str:
    """Users are counted per platform: the same id on two platforms is two people."""
    return f"{platform}:{user_id}"


def utc_today() -> date:
    return datetime.now(UTC).date()


class UsageLedger:
    def __init__(self, store: UsageStore, today: Callable[[], date] = utc_today) -> None:
        self.store, self.today = store, today
        self._writer: BatchWriter[UsageRecord] = BatchWriter(store.add, "usage record", log)

    def record(self, chat: str, user_id: str, model: str, usage: Usage, cost: float | None) -> None:
        totals = UsageTotals(1, usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, cost or 0.0)
        self._writer.submit(UsageRecord(self.today(), chat, user_id, model, totals))

    async def drain(self) -> None:
        await self._writer.drain()

    async def totals(self, since: date, chat: str | None = None, user_id: str | None = None) -> UsageTotals:
        stored = await self.store.totals(since, chat, user_id)
        for r in self._writer.unwritten():
            if r.day >= since and chat in (None, r.chat) and user_id in (None, r.user_id):
                stored += r.totals
        return stored
