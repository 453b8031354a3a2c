"""How the dashboard labels roles and shows times (message text goes through bot/httpkit/markdown.py)."""

from __future__ import annotations

from datetime import UTC, datetime

ROLE_LABELS = {"system": "System", "user": "You", "assistant": "AI", "tool": "Tool result"}


def role_label(role: str) -> str:
    return ROLE_LABELS.get(role, role)


def timestamp(seconds: float) -> str:
    """A wall-clock time (seconds since the epoch) as the dashboard shows times: UTC, to the second."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")
