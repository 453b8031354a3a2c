"""Quotas: a reservation adds to every line or to none; a full line is reported with what it used; the
warning is due once, on the reservation that reaches the share; settling moves the rows both ways; racing
reservations on one row never pass its cap; a new period is a new row."""

from __future__ import annotations

import asyncio

from bot.store import Store
from bot.store.quotas import QuotaKey, QuotaLine, QuotaState

USER = QuotaKey("user", "t:u1", "day", "2026-12-02")
AGENT = QuotaKey("agent", "default", "month", "2026-12-01")


async def test_a_reservation_takes_every_line_or_none(store: Store) -> None:
    lines = [QuotaLine(USER, 100), QuotaLine(AGENT, 1000)]
    first = await store.quotas.reserve(lines, 60, 0.8)
    assert first.ok and {s.key: s.used for s in first.granted} == {USER: 60, AGENT: 60}
    second = await store.quotas.reserve(lines, 50, 0.8)  # the user's line is short of room: nothing is taken
    assert not second.ok and second.granted and second.refused == (QuotaState(USER, 60, 100),)
    assert {s.key: s.used for s in await store.quotas.states([USER, AGENT])} == {USER: 60, AGENT: 60}
    fresh = await store.quotas.reserve([QuotaLine(QuotaKey("chat", "t:c", "day", "2026-12-02"), 10)], 11, 0.8)
    assert fresh.refused == (QuotaState(QuotaKey("chat", "t:c", "day", "2026-12-02"), 0, 10),)


async def test_the_warning_is_due_once_a_period_and_settling_moves_the_rows(store: Store) -> None:
    line = [QuotaLine(USER, 100)]
    assert [s.warn for s in (await store.quotas.reserve(line, 50, 0.8)).granted] == [False]
    assert [s.warn for s in (await store.quotas.reserve(line, 30, 0.8)).granted] == [True]  # 80 of 100
    await store.quotas.settle([(USER, -40), (USER, 5)])  # one batch: summed per row
    assert (await store.quotas.states([USER]))[0].used == 45
    assert [s.warn for s in (await store.quotas.reserve(line, 40, 0.8)).granted] == [False]  # warned already
    tomorrow = QuotaKey("user", "t:u1", "day", "2026-12-03")
    assert [s.warn for s in (await store.quotas.reserve([QuotaLine(tomorrow, 100)], 90, 0.8)).granted] == [True]


async def test_racing_reservations_never_pass_the_cap(store: Store) -> None:
    results = await asyncio.gather(*(store.quotas.reserve([QuotaLine(AGENT, 100), QuotaLine(
        QuotaKey("user", f"t:u{n}", "day", "2026-12-02"), 50)], 7, 0.8) for n in range(40)))
    assert sum(r.ok for r in results) == 14  # 14 × 7 = 98 ≤ 100 < 105
    assert (await store.quotas.states([AGENT]))[0].used == 98


async def test_periods_long_over_are_pruned(store: Store) -> None:
    old = QuotaKey("user", "t:u1", "day", "2026-09-30")
    await store.quotas.reserve([QuotaLine(old, 100)], 10, 0.8)
    await store.quotas.reserve([QuotaLine(USER, 100), QuotaLine(AGENT, 100)], 10, 0.8)
    assert await store.quotas.prune("2026-10-01") == 1
    assert {s.key for s in await store.quotas.states([old, USER, AGENT])} == {USER, AGENT}
