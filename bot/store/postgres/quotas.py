"""Quotas on PostgreSQL: a reservation is one statement (one round trip), exact across replicas; only a
refused one costs two more (giving back what the other lines got, and reading the full ones)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.store.postgres.database import Database
from bot.store.quotas import QuotaKey, QuotaLine, QuotaState, Reserved
from bot.store.quotas_sql import (
    key_args,
    postgres_mark,
    prune_sql,
    reserve_args,
    reserve_sql,
    reserved,
    settle_args,
    settle_sql,
    state,
    states_sql,
)

_SETTLE, _PRUNE = settle_sql(postgres_mark), prune_sql(postgres_mark)


class PostgresQuotas:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def reserve(self, lines: Sequence[QuotaLine], amount: float, warn_at: float) -> Reserved:
        lines = sorted(lines, key=lambda line: line.key)
        got = [tuple(r) for r in await self._db.pool.fetch(reserve_sql(len(lines), postgres_mark),
                                                           *reserve_args(lines, amount, warn_at))]
        if len(got) == len(lines):
            return reserved(lines, got, ())
        await self.settle([(QuotaKey(*r[:4]), -amount) for r in got])
        return reserved(lines, got, await self.states([line.key for line in lines]))

    async def settle(self, changes: Sequence[tuple[QuotaKey, float]]) -> None:
        if rows := settle_args(changes):
            await self._db.pool.executemany(_SETTLE, rows)

    async def states(self, keys: Sequence[QuotaKey]) -> list[QuotaState]:
        if not keys:
            return []
        return [state(tuple(r)) for r in await self._db.pool.fetch(states_sql(len(keys), postgres_mark),
                                                                   *key_args(keys))]

    async def prune(self, before: str) -> int:
        status = await self._db.pool.execute(_PRUNE, before)
        return int(status.split()[-1])  # "DELETE <n>"
