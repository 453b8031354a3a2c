"""The usage SQL both backends share, written once (placeholders `?`; PostgreSQL gets them numbered).

Each batch also adds to one row per day with empty chat, user and model: everyone's total, so a global
budget or the dashboard's total reads a day's single row instead of every chat's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date
from typing import Any

from bot.store.usage import Period, Scope, Spent, UsageRecord, UsageTotals

EVERYONE = ""  # chat, user and model of the per-day total rows
SUMS = ("COALESCE(SUM(requests), 0), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
        "COALESCE(SUM(cached_tokens), 0), COALESCE(SUM(cost), 0)")
UPSERT = ("INSERT INTO usage (day, chat, user_id, model, requests, prompt_tokens, completion_tokens, cached_tokens, "
          "cost) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chat, day, user_id, model) DO UPDATE SET "
          "requests = usage.requests + excluded.requests, "
          "prompt_tokens = usage.prompt_tokens + excluded.prompt_tokens, "
          "completion_tokens = usage.completion_tokens + excluded.completion_tokens, "
          "cached_tokens = usage.cached_tokens + excluded.cached_tokens, cost = usage.cost + excluded.cost")
BREAKDOWN = ("SELECT {by}, " + SUMS + " FROM usage WHERE day >= ? AND chat <> '' GROUP BY {by} "
             "ORDER BY SUM(cost) DESC, SUM(prompt_tokens) + SUM(completion_tokens) DESC, 1 LIMIT ?")
_WHERE: dict[Scope, str] = {"chat": "chat = ?", "user": "user_id = ? AND chat <> ''", "all": "chat = ''"}
_SPENT_PART = ("SELECT '{scope}', COALESCE(SUM(CASE WHEN day = ? THEN cost END), 0), "
               "COALESCE(SUM(CASE WHEN day = ? THEN prompt_tokens + completion_tokens END), 0), "
               "COALESCE(SUM(cost), 0), COALESCE(SUM(prompt_tokens + completion_tokens), 0) "
               "FROM usage WHERE {where} AND day >= ?")
SPENT = " UNION ALL ".join(_SPENT_PART.format(scope=scope, where=where) for scope, where in _WHERE.items())


def rows(records: Iterable[UsageRecord], day: Callable[[date], Any]) -> list[tuple[Any, ...]]:
    """The records' rows, plus each day's addition to everyone's row."""
    everyone: dict[date, UsageTotals] = {}
    out = []
    for r in records:
        everyone[r.day] = everyone.get(r.day, UsageTotals()) + r.totals
        out.append((day(r.day), r.chat, r.user_id, r.model, *_values(r.totals)))
    out += [(day(d), EVERYONE, EVERYONE, EVERYONE, *_values(t)) for d, t in everyone.items()]
    return out


def _values(t: UsageTotals) -> tuple[Any, ...]:
    return t.requests, t.prompt_tokens, t.completion_tokens, t.cached_tokens, t.cost


def totals_query(chat: str | None, user_id: str | None) -> tuple[str, list[Any]]:
    """Everyone's rows when neither is given; else the chat's and/or the user's."""
    if chat is None and user_id is None:
        return f"SELECT {SUMS} FROM usage WHERE day >= ? AND chat = ''", []
    sql, args = f"SELECT {SUMS} FROM usage WHERE day >= ? AND chat <> ''", []
    for column, value in (("chat", chat), ("user_id", user_id)):
        if value is not None:
            sql += f" AND {column} = ?"
            args.append(value)
    return sql, args


def spent_args(chat: str, user_id: str, today: Any, month: Any) -> list[Any]:
    return [today, today, chat, month, today, today, user_id, month, today, today, month]


def spent_result(result: Sequence[Sequence[Any]]) -> Spent:
    money: dict[tuple[Scope, Period], float] = {}
    tokens: dict[tuple[Scope, Period], int] = {}
    for scope, day_cost, day_tokens, month_cost, month_tokens in result:
        money[(scope, "day")], money[(scope, "month")] = float(day_cost), float(month_cost)
        tokens[(scope, "day")], tokens[(scope, "month")] = int(day_tokens), int(month_tokens)
    return Spent(money, tokens)


def usage_totals(row: Sequence[Any]) -> UsageTotals:
    return UsageTotals(int(row[0]), int(row[1]), int(row[2]), int(row[3]), float(row[4]))


def numbered(sql: str) -> str:
    """`?` placeholders as PostgreSQL's $1, $2 …"""
    parts = sql.split("?")
    return "".join(part + (f"${n}" if n < len(parts) else "") for n, part in enumerate(parts, start=1))
