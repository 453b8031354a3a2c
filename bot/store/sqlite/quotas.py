"""Quotas on SQLite: the reservation and, when a line had no room, the give-back in one write transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from bot.store.quotas import QuotaKey, QuotaLine, QuotaState, Reserved
from bot.store.quotas_sql import (
    key_args,
    prune_sql,
    reserve_args,
    reserve_sql,
    reserved,
    settle_args,
    settle_sql,
    sqlite_mark,
    state,
    states_sql,
)
from bot.store.sqlite.database import Database

_SETTLE = settle_sql(sqlite_mark)


class SqliteQuotas:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def reserve(self, lines: Sequence[QuotaLine], amount: float, warn_at: float) -> Reserved:
        lines = sorted(lines, key=lambda line: line.key)
        sql, args = reserve_sql(len(lines), sqlite_mark), reserve_args(lines, amount, warn_at)

        def op(db: sqlite3.Connection) -> Reserved:
            got = db.execute(sql, args).fetchall()
            if len(got) == len(lines):
                return reserved(lines, got, ())
            db.executemany(_SETTLE, settle_args((QuotaKey(*r[:4]), -amount) for r in got))
            return reserved(lines, got, _states(db, [line.key for line in lines]))

        return await self._db.write(op)

    async def settle(self, changes: Sequence[tuple[QuotaKey, float]]) -> None:
        rows = settle_args(changes)
        await self._db.write(lambda db: db.executemany(_SETTLE, rows))

    async def states(self, keys: Sequence[QuotaKey]) -> list[QuotaState]:
        return await self._db.read(lambda db: _states(db, keys))

    async def prune(self, before: str) -> int:
        return await self._db.write(lambda db: db.execute(prune_sql(sqlite_mark), (before,)).rowcount)


def _states(db: sqlite3.Connection, keys: Sequence[QuotaKey]) -> list[QuotaState]:
    if not keys:
        return []
    return [state(r) for r in db.execute(states_sql(len(keys), sqlite_mark), key_args(keys)).fetchall()]
