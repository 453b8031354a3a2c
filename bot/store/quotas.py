"""Quotas (issue 31): one row per (scope, subject, period, start) holding what is used and reserved of a cap.

A model request reserves its estimate on every quota it counts against in ONE conditional statement (an
upsert whose update only happens while the row has room), so replicas that race for the last of a budget
can never together reserve more than it; the request settles the difference to what it really used after.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

QuotaScope = Literal["user", "chat", "agent"]
QuotaPeriod = Literal["day", "month"]


@dataclass(frozen=True, slots=True, order=True)
class QuotaKey:
    scope: QuotaScope
    subject: str  # the user's key, the chat's storage key or the agent's name
    period: QuotaPeriod
    start: str  # ISO date of the period's first UTC day: a new period is a new row


@dataclass(frozen=True, slots=True)
class QuotaLine:
    key: QuotaKey
    limit: float


@dataclass(frozen=True, slots=True)
class QuotaState:
    key: QuotaKey
    used: float  # settled use plus open reservations
    limit: float
    warn: bool = False  # this reservation was the first of the period to reach the warning share


@dataclass(frozen=True, slots=True)
class Reserved:
    """What a reservation got: every line's row after it, or (refused) the lines that had no room."""

    granted: tuple[QuotaState, ...]
    refused: tuple[QuotaState, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.refused


class QuotaStore(Protocol):
    async def reserve(self, lines: Sequence[QuotaLine], amount: float, warn_at: float) -> Reserved:
        """Add `amount` to every line that has room for it, in one statement; when one had none, give back
        what the others got (the refusal path only) and report the full ones."""
        ...

    async def settle(self, changes: Sequence[tuple[QuotaKey, float]]) -> None:
        """Add each (possibly negative) difference between what was reserved and what was used, in one
        operation."""
        ...

    async def states(self, keys: Sequence[QuotaKey]) -> list[QuotaState]:
        """The rows of these keys that exist (a refusal's message; tests)."""
        ...

    async def prune(self, before: str) -> int:
        """Delete the rows of periods that started before this ISO date (long over); returns how many."""
        ...
