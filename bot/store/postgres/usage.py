"""Usage totals on PostgreSQL: one statement per batch (concurrent replicas add to the same rows atomically)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Literal

from bot.store.postgres.database import Database
from bot.store.usage import UsageRecord, UsageTotals
from bot.store.usage_sql import (
    BREAKDOWN,
    UPSERT,
    numbered,
    rows,
    totals_query,
    usage_totals,
)

_UPSERT = numbered(UPSERT)


class PostgresUsage:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, records: Sequence[UsageRecord]) -> None:
        # sorted: two replicas adding to the same rows lock them in one order, never deadlocking
        await self._db.pool.executemany(_UPSERT, sorted(rows(records, lambda d: d)))

    async def totals(self, since: date, chat: str | None = None, user_id: str | None = None) -> UsageTotals:
        sql, args = totals_query(chat, user_id)
        return usage_totals(await self._db.pool.fetchrow(numbered(sql), since, *args))

    async def breakdown(self, since: date, by: Literal["chat", "user_id", "model", "day"], limit: int = 20
                        ) -> list[tuple[str, UsageTotals]]:
        column = "day::text" if by == "day" else by
        found = await self._db.pool.fetch(numbered(BREAKDOWN.format(by=column)), since, limit)
        return [(str(r[0]), usage_totals(tuple(r)[1:])) for r in found]
