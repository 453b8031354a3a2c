"""Token and money totals per UTC day, chat, user and model: what /usage and the dashboard read.

One row per (day, chat, user, model) that each batch adds to, so a year of traffic is at most a row per
active chat, user and model a day, and every total is a sum over an index range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Literal, Protocol


@dataclass(frozen=True, slots=True)
class UsageTotals:
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0  # money by the price table; unpriced models add tokens, not money

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: UsageTotals) -> UsageTotals:
        return UsageTotals(self.requests + other.requests, self.prompt_tokens + other.prompt_tokens,
                           self.completion_tokens + other.completion_tokens,
                           self.cached_tokens + other.cached_tokens, self.cost + other.cost)


@dataclass(frozen=True, slots=True)
class UsageRecord:
    day: date  # UTC
    chat: str
    user_id: str
    model: str
    totals: UsageTotals


class UsageStore(Protocol):
    async def add(self, records: Sequence[UsageRecord]) -> None:
        """Add each record to its (day, chat, user, model) row, in one operation."""
        ...

    async def totals(self, since: date, chat: str | None = None, user_id: str | None = None) -> UsageTotals:
        """Sums from `since` (inclusive) on, narrowed to a chat and/or a user when given."""
        ...

    async def breakdown(self, since: date, by: Literal["chat", "user_id", "model", "day"], limit: int = 20
                        ) -> list[tuple[str, UsageTotals]]:
        """Sums from `since` on per chat, user, model or day (ISO date), most money (then tokens) first."""
        ...
