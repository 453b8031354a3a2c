"""Every platform fake judges the bot's pacing from outside, by what arrives.

A fake answers a call over the platform's limits with a 429, which the bot survives by waiting: a bot that
paces too fast would still pass. So each fake also keeps a judge of the platform's real budgets (per chat or
channel, per group window, global) that only records, in `budget_breaches`, every call that went over one;
tests/conftest.py fails any test whose fakes saw a breach, unless the test set `budget_allowance` to say why.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Breach:
    at: float  # monotonic seconds
    rule: str  # e.g. "per chat", "global"
    target: str  # the chat, channel, message or card whose budget it was


class Judged:
    """Mixed into each platform fake: its breaches, and the one way a test may accept them."""

    budget_breaches: list[Breach]
    budget_allowance: str | None  # why this test's breaches are expected (None: any breach fails the test)

    def __init__(self) -> None:
        self.budget_breaches = []
        self.budget_allowance = None
        MADE.append(self)

    def breach(self, rule: str, target: object) -> None:
        self.budget_breaches.append(Breach(time.monotonic(), rule, str(target)))


MADE: list[Judged] = []  # the fakes made during the running test (tests/conftest.py empties it)


class SlidingWindows:
    """At most `limit` calls per target within any `window` seconds; `over` counts and says if one is too many."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self._stamps: dict[str, deque[float]] = defaultdict(deque)

    def over(self, target: str = "") -> bool:
        now, stamps = self.clock(), self._stamps[target]
        while stamps and now - stamps[0] >= self.window:
            stamps.popleft()
        if len(stamps) >= self.limit:
            return True  # the platform refuses it: it does not count
        stamps.append(now)
        return False

    def free_in(self, target: str = "") -> float:
        """Seconds until the target's window has room again (what an honest Retry-After says)."""
        stamps = self._stamps[target]
        return max(0.0, stamps[0] + self.window - self.clock()) if len(stamps) >= self.limit else 0.0


def unexpected(fakes: list[Judged]) -> list[tuple[str, Breach]]:
    """The breaches no test accepted, by fake."""
    return [(type(fake).__name__, b) for fake in fakes if fake.budget_allowance is None
            for b in fake.budget_breaches]
