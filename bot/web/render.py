"""How the dashboard labels roles and shows times, in the browser's language (message text: bot/httpkit/markdown.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.i18n import STRINGS, t


def role_label(lang: str, role: str) -> str:
    key = f"role_{role}"
    return t(lang, key) if key in STRINGS else role


def timestamp(seconds: float) -> str:
    """A wall-clock time (seconds since the epoch) as the dashboard shows times: UTC, to the second."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")
