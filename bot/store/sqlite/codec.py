"""How SQLite columns hold Python values: times as UTC ISO-8601 text (sortable), JSON as text."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.tree.model import utc_now


def iso(dt: datetime) -> str:
    aware = dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


def now_iso() -> str:
    return iso(utc_now())


def parse_time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None
