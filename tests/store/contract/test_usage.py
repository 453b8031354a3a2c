"""Usage totals: batches add up per day, chat, user and model; totals and breakdowns read them back; other
chats never leak in."""

from __future__ import annotations

import asyncio
from datetime import date

from bot.store import Store, UsageRecord, UsageTotals

TODAY = date(2026, 12, 2)
EARLIER = date(2026, 12, 1)
LAST_MONTH = date(2026, 11, 30)


def rec(chat: str, user: str, model: str = "m", day: date = TODAY, tokens: tuple[int, int] = (100, 10),
        cost: float = 0.5) -> UsageRecord:
    return UsageRecord(day, chat, user, model, UsageTotals(1, tokens[0], tokens[1], 20, cost))


async def test_batches_add_up_and_read_back_by_chat_user_and_everyone(store: Store) -> None:
    await store.usage.add([rec("t:a", "u1"), rec("t:a", "u1"), rec("t:a", "u2", "other"), rec("t:b", "u1")])
    await store.usage.add([rec("t:a", "u1", day=EARLIER), rec("t:c", "u3", day=LAST_MONTH, cost=9)])
    assert await store.usage.totals(TODAY, chat="t:a") == UsageTotals(3, 300, 30, 60, 1.5)
    assert await store.usage.totals(TODAY, chat="t:a", user_id="u1") == UsageTotals(2, 200, 20, 40, 1.0)
    assert await store.usage.totals(EARLIER, user_id="u1") == UsageTotals(4, 400, 40, 80, 2.0)
    assert await store.usage.totals(EARLIER) == UsageTotals(5, 500, 50, 100, 2.5)  # everyone, this month
    assert await store.usage.totals(TODAY, chat="t:nobody") == UsageTotals()
    by_chat = await store.usage.breakdown(EARLIER, "chat")
    assert [(chat, t.cost) for chat, t in by_chat] == [("t:a", 2.0), ("t:b", 0.5)]
    assert [m for m, _ in await store.usage.breakdown(LAST_MONTH, "model")] == ["m", "other"]
    days = await store.usage.breakdown(LAST_MONTH, "day", limit=5)
    assert sorted(d for d, _ in days) == ["2026-11-30", "2026-12-01", "2026-12-02"]


async def test_concurrent_batches_lose_nothing(store: Store) -> None:
    writers = 8
    await asyncio.gather(*(store.usage.add([rec("t:a", "u1"), rec(f"t:{n}", "u1")]) for n in range(writers)))
    assert (await store.usage.totals(TODAY, chat="t:a")).requests == writers
    assert (await store.usage.totals(TODAY)).requests == 2 * writers
