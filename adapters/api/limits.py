"""Requests per API token: a token bucket each, so one busy caller cannot crowd out the others."""

from __future__ import annotations

import time
from collections.abc import Callable


class RateLimits:
    def __init__(self, burst: int, per_second: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._burst = float(burst)
        self._rate = per_second
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # token id → (requests left, when counted)

    def take(self, token_id: str) -> float:
        """0 when the request may go ahead (and is counted); else the seconds until one may."""
        now = self._clock()
        left, then = self._buckets.get(token_id, (self._burst, now))
        left = min(self._burst, left + (now - then) * self._rate)
        if left < 1.0:
            self._buckets[token_id] = (left, now)
            return (1.0 - left) / self._rate
        self._buckets[token_id] = (left - 1.0, now)
        return 0.0
