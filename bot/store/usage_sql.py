"""The usage SQL both backends share, written once (placeholders `?`; PostgreSQL gets them numbered).

Each batch also adds to one row per day with empty chat, user and model: everyone's total, so the
dashboard's total reads a day's single row instead of every chat's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date
from typing import Any

from bot.store.usage import UsageRecord, UsageTotals

EVERYONE = ""  # chat, user and model of the per-day total rows
SUMS = ("COALESCE(SUM(requests), 0), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
        "COALESCE(SUM(cached_tokens), 0), COALESCE(SUM(cost), 0)")
INSERT = ("INSERT INTO usage (day, chat, user_id, model, requests, prompt_tokens, completion_tokens, cached_tokens, "
          "cost)")
ADD_TO = ("ON CONFLICT (chat, day, user_id, model) DO UPDATE SET "
          "requests = usage.requests + excluded.requests, "
          "prompt_tokens = usage.prompt_tokens + excluded.prompt_tokens, "
          "completion_tokens = usage.completion_tokens + excluded.completion_tokens, "
          "cached_tokens = usage.cached_tokens + excluded.cached_tokens, cost = usage.cost + excluded.cost")
UPSERT = f"{INSERT} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) {ADD_TO}"
BREAKDOWN = ("SELECT {by}, " + SUMS + " FROM usage WHERE day >= ? AND chat <> '' GROUP BY {by} "
             "ORDER BY SUM(cost) DESC, SUM(prompt_tokens) + SUM(completion_tokens) DESC, 1 LIMIT ?")


def rows(records: Iterable[UsageRecord], day: Callable[[date], Any]) -> list[tuple[Any, ...]]:
    """One row per (day, chat, user, model) the records add to, each day's addition to everyone's row among
    them, in key order (two replicas adding to the same rows lock them in one order, never deadlocking)."""
    added: dict[tuple[date, str, str, str], UsageTotals] = {}
    for r in records:
        for key in ((r.day, r.chat, r.user_id, r.model), (r.day, EVERYONE, EVERYONE, EVERYONE)):
            added[key] = added.get(key, UsageTotals()) + r.totals
    return [(day(d), chat, user, model, *_values(added[d, chat, user, model]))
            for d, chat, user, model in sorted(added, key=lambda k: (k[1], k[0], k[2], k[3]))]


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


def usage_totals(row: Sequence[Any]) -> UsageTotals:
    return UsageTotals(int(row[0]), int(row[1]), int(row[2]), int(row[3]), float(row[4]))


def numbered(sql: str) -> str:
    """`?` placeholders as PostgreSQL's $1, $2 …"""
    parts = sql.split("?")
    return "".join(part + (f"${n}" if n < len(parts) else "") for n, part in enumerate(parts, start=1))
