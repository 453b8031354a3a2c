"""The quota SQL both backends share, written once; `mark(n)` numbers the placeholders ($n or ?n).

The reservation is one INSERT … ON CONFLICT DO UPDATE … WHERE: a row is only added to while it has room,
decided on the row's latest committed value under its row lock (PostgreSQL) or the single writer (SQLite),
so no interleaving of replicas can reserve past a cap. Lines are sorted, so two reservations that share rows
lock them in one order and never deadlock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from bot.store.quotas import QuotaKey, QuotaLine, QuotaState, Reserved

Mark = Callable[[int], str]
REAL = "CAST({} AS DOUBLE PRECISION)"
KEY = "scope, subject, period, start"


def reserve_sql(lines: int, mark: Mark) -> str:
    """Parameters: the amount, the warning share, then each line's key and limit (`reserve_args`)."""
    amount, warn = REAL.format(mark(1)), REAL.format(mark(2))
    values = ", ".join(
        f"({mark(3 + 5 * i)}, {mark(4 + 5 * i)}, {mark(5 + 5 * i)}, {mark(6 + 5 * i)}, {REAL.format(mark(7 + 5 * i))})"
        for i in range(lines))
    return (f"INSERT INTO quotas ({KEY}, used, quota, reservations, warned) "
            f"SELECT column1, column2, column3, column4, {amount}, column5, 1, "
            f"CASE WHEN {amount} >= {warn} * column5 THEN 1 ELSE 0 END "
            f"FROM (VALUES {values}) AS wanted WHERE {amount} <= column5 "
            f"ON CONFLICT ({KEY}) DO UPDATE SET used = quotas.used + excluded.used, quota = excluded.quota, "
            "reservations = quotas.reservations + 1, "
            f"warned = CASE WHEN quotas.warned = 0 AND quotas.used + excluded.used >= {warn} * excluded.quota "
            "THEN quotas.reservations + 1 ELSE quotas.warned END "
            "WHERE quotas.used + excluded.used <= excluded.quota "
            f"RETURNING {KEY}, used, quota, reservations, warned")


def reserve_args(lines: Sequence[QuotaLine], amount: float, warn_at: float) -> list[Any]:
    args: list[Any] = [amount, warn_at]
    for line in lines:
        k = line.key
        args += [k.scope, k.subject, k.period, k.start, line.limit]
    return args


def settle_sql(mark: Mark) -> str:
    """Parameters: the change, then the row's key."""
    return (f"UPDATE quotas SET used = used + {REAL.format(mark(1))} "
            f"WHERE scope = {mark(2)} AND subject = {mark(3)} AND period = {mark(4)} AND start = {mark(5)}")


def settle_args(changes: Iterable[tuple[QuotaKey, float]]) -> list[tuple[Any, ...]]:
    """One row per key (a batch's changes to one key summed), in key order: concurrent batches never deadlock."""
    summed: dict[QuotaKey, float] = {}
    for key, change in changes:
        summed[key] = summed.get(key, 0.0) + change
    return [(change, k.scope, k.subject, k.period, k.start) for k, change in sorted(summed.items()) if change]


def states_sql(keys: int, mark: Mark) -> str:
    wanted = " OR ".join(f"(scope = {mark(1 + 4 * i)} AND subject = {mark(2 + 4 * i)} AND period = "
                         f"{mark(3 + 4 * i)} AND start = {mark(4 + 4 * i)})" for i in range(keys))
    return f"SELECT {KEY}, used, quota FROM quotas WHERE {wanted}"


def prune_sql(mark: Mark) -> str:
    return f"DELETE FROM quotas WHERE start < {mark(1)}"


def key_args(keys: Iterable[QuotaKey]) -> list[Any]:
    return [value for k in keys for value in (k.scope, k.subject, k.period, k.start)]


def state(row: Sequence[Any], warn: bool = False) -> QuotaState:
    return QuotaState(QuotaKey(row[0], row[1], row[2], row[3]), float(row[4]), float(row[5]), warn)


def reserved(lines: Sequence[QuotaLine], rows: Iterable[Sequence[Any]], current: Sequence[QuotaState]
             ) -> Reserved:
    """The reservation's rows (`rows`: RETURNING's, a row's warning due when its reservation set it) and,
    for the lines that got none, their current rows (`current`; a missing row has used nothing)."""
    granted = {(s := state(r, warn=int(r[6]) == int(r[7]))).key: s for r in rows}
    found = {s.key: s for s in current}
    refused = tuple(found.get(line.key, QuotaState(line.key, 0.0, line.limit))
                    for line in lines if line.key not in granted)
    return Reserved(tuple(granted.values()), refused)


def sqlite_mark(n: int) -> str:
    return f"?{n}"


def postgres_mark(n: int) -> str:
    return f"${n}"
