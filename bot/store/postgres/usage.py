"""Usage totals on PostgreSQL: one statement per batch (concurrent replicas add to the same rows atomically)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Literal

from bot.store.postgres.database import Database
from bot.store.usage import UsageRecord, UsageTotals
from bot.store.usage_sql import (
    ADD_TO,
    BREAKDOWN,
    INSERT,
    numbered,
    rows,
    totals_query,
    usage_totals,
)

# A batch's rows in one statement (one row per key: `rows` adds up a key's records), in the order given.
_UPSERT = (f"{INSERT} SELECT * FROM unnest($1::date[], $2::text[], $3::text[], $4::text[], $5::bigint[], "
           f"$6::bigint[], $7::bigint[], $8::bigint[], $9::float8[]) {ADD_TO}")


class PostgresUsage:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, records: Sequence[UsageRecord]) -> None:
        if records:
            await self._db.pool.execute(_UPSERT, *(list(c) for c in zip(*rows(records, lambda d: d), strict=True)))

    async def totals(self, since: date, chat: str | None = None, user_id: str | None = None) -> UsageTotals:
        sql, args = totals_query(chat, user_id)
        return usage_totals(await self._db.pool.fetchrow(numbered(sql), since, *args))

    async def breakdown(self, since: date, by: Literal["chat", "user_id", "model", "day"], limit: int = 20
                        ) -> list[tuple[str, UsageTotals]]:
        column = "day::text" if by == "day" else by
        found = await self._db.pool.fetch(numbered(BREAKDOWN.format(by=column)), since, limit)
        return [(str(r[0]), usage_totals(tuple(r)[1:])) for r in found]
