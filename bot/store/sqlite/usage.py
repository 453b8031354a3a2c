"""Usage totals on SQLite: one transaction per batch; every read is one statement over an index range."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import date
from typing import Literal

from bot.store.sqlite.database import Database
from bot.store.usage import UsageRecord, UsageTotals
from bot.store.usage_sql import BREAKDOWN, UPSERT, rows, totals_query, usage_totals


class SqliteUsage:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, records: Sequence[UsageRecord]) -> None:
        values = rows(records, date.isoformat)

        def op(db: sqlite3.Connection) -> None:
            db.executemany(UPSERT, values)

        await self._db.write(op)

    async def totals(self, since: date, chat: str | None = None, user_id: str | None = None) -> UsageTotals:
        sql, args = totals_query(chat, user_id)
        row = await self._db.read(lambda db: db.execute(sql, [since.isoformat(), *args]).fetchone())
        return usage_totals(row)

    async def breakdown(self, since: date, by: Literal["chat", "user_id", "model", "day"], limit: int = 20
                        ) -> list[tuple[str, UsageTotals]]:
        sql = BREAKDOWN.format(by=by)
        found = await self._db.read(lambda db: db.execute(sql, (since.isoformat(), limit)).fetchall())
        return [(str(r[0]), usage_totals(r[1:])) for r in found]
