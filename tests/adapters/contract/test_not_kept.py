"""The adapter contract when the hub could not keep an event (its inbox write failed: NotKept), held against every
adapter over its real transport: the platform is not told the event was delivered (no ACK, a non-2xx answer, no
confirmed offset, a notice to the person), and the platform's redelivery is handed to the hub again, not dropped
as a duplicate by the dedupe mark the first delivery set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from bot.messages import IncomingMessage
from tests.adapters.contract.driver import Driver, payload

SETTLE = 0.3  # seconds: an acknowledgement sent regardless of the refusal would have reached the platform by then


async def _until(done: Callable[[], bool], within: float = 10.0) -> bool:
    for _ in range(int(within / 0.02)):
        if done():
            return True
        await asyncio.sleep(0.02)
    return done()


async def test_an_event_not_kept_is_not_acknowledged_and_its_redelivery_is_taken(driver: Driver) -> None:
    refused = driver.inbox.refuse()
    await driver.offer(payload(driver.name, "dm")["event"])
    await asyncio.wait_for(refused.wait(), 10.0)
    await asyncio.sleep(SETTLE)
    if driver.acknowledges:
        assert not driver.confirmed(), "the platform was told an event the hub did not keep was delivered"
    assert not driver.inbox.accepted

    await driver.offer_again()
    again = await driver.inbox.next(within=10.0)
    first = driver.inbox.handed[0]
    assert isinstance(again, IncomingMessage) and isinstance(first, IncomingMessage)
    assert (again.chat_id, again.text) == (first.chat_id, first.text), "the redelivery is not the same event"
    assert len(driver.inbox.handed) == 2
    assert await _until(driver.confirmed), "the platform was not told the redelivered event is kept"
