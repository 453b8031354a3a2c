"""Each provider's health: a circuit breaker with half-open probes, the last error and the latency seen.

A provider that keeps failing is skipped for `cooldown` seconds instead of making every user wait for its
timeout first; then one request is let through as a probe, and its outcome closes or re-opens the breaker.
Kept in memory per process: replicas judge a provider by what they see themselves.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.ops.providers import HealthView

LATENCY_SMOOTHING = 0.3  # weight of the newest request in the running latency


class Breaker:
    """closed → open after `threshold` failures in a row → half-open after `cooldown` (one probe) → closed or open."""

    def __init__(self, threshold: int, cooldown: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.threshold, self.cooldown, self.clock = threshold, cooldown, clock
        self._failures = 0
        self._opened_at: float | None = None
        self._probing = False

    @property
    def state(self) -> str:
        if self._opened_at is None:
            return "closed"
        return "half_open" if self.clock() - self._opened_at >= self.cooldown else "open"

    def admit(self) -> bool:
        """May a request go to this provider now? In half-open state only one at a time: the probe."""
        state = self.state
        if state == "closed":
            return True
        if state == "open" or self._probing:
            return False
        self._probing = True
        return True

    def succeeded(self) -> None:
        self._failures, self._opened_at, self._probing = 0, None, False

    def abandon(self) -> None:
        """A request that ended without an outcome (cancelled): another may probe."""
        self._probing = False

    def failed(self) -> None:
        self._failures += 1
        if self._probing or self._failures >= self.threshold:
            self._opened_at = self.clock()  # a failed probe waits out a whole cooldown again
        self._probing = False


class ProviderHealth:
    """The breaker plus what was observed: requests, failures, the last error, the smoothed latency."""

    def __init__(self, name: str, breaker: Breaker) -> None:
        self.name, self.breaker = name, breaker
        self.requests = self.failures = 0
        self.latency: float | None = None
        self._last_error: tuple[str, float] | None = None

    def record_success(self, first_token: float | None) -> None:
        self.requests += 1
        self.breaker.succeeded()
        if first_token is not None:
            self.latency = first_token if self.latency is None else (
                (1 - LATENCY_SMOOTHING) * self.latency + LATENCY_SMOOTHING * first_token)

    def record_failure(self, kind: str, unwell: bool) -> None:
        """`unwell`: the failure says the provider is (5xx, 429, timeouts …); a refusal of the request's content
        (a 400, too long a context) came from a working provider and closes the breaker like a success."""
        self.requests += 1
        self._last_error = (kind, self.breaker.clock())
        if unwell:
            self.failures += 1
            self.breaker.failed()
        else:
            self.breaker.succeeded()

    def view(self) -> HealthView:
        last = None
        if self._last_error is not None:
            kind, at = self._last_error
            last = f"{kind} ({round(self.breaker.clock() - at)} s ago)"
        return HealthView(self.name, self.breaker.state, last, self.latency, self.requests, self.failures)
