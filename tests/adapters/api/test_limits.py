"""The per-token bucket on a clock the test moves: a burst at once, then the rate, each token apart."""

from __future__ import annotations

from adapters.api.limits import RateLimits


def test_a_burst_then_the_rate_and_the_wait_it_says() -> None:
    now = [100.0]
    limits = RateLimits(burst=3, per_second=0.5, clock=lambda: now[0])
    assert [limits.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limits.take("a") == 2.0  # empty: one request refills in 2 s
    assert limits.take("b") == 0.0  # another token has its own bucket
    now[0] += 1.0
    assert limits.take("a") == 1.0  # half refilled; a refused request costs nothing
    now[0] += 1.0
    assert limits.take("a") == 0.0
    now[0] += 60.0
    assert [limits.take("a") for _ in range(4)] == [0.0, 0.0, 0.0, 2.0]  # refills up to the burst, no more
