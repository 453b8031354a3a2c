"""Hand-off codes on both backends: valid until they expire, spent once (two takes at once: one wins), and
dropped once expired when the next code is offered."""

from __future__ import annotations

import asyncio

from bot.store import Store
from bot.store.handoffs import Handoff
from tests.store.conftest import StoreFactory

NOW = 1_000_000.0


def handoff(code: str, expires_at: float = NOW + 600, move: bool = False) -> Handoff:
    return Handoff(code, "telegram:42", "conv1", "telegram", "42", move, expires_at)


async def test_a_code_is_seen_until_it_expires_and_taken_once(store: Store) -> None:
    offered = handoff("ABC234", move=True)
    await store.handoffs.offer(offered, NOW)
    assert await store.handoffs.peek("ABC234", NOW) == offered
    assert await store.handoffs.peek("ABC234", NOW + 600) is None  # expired at its expiry
    assert await store.handoffs.peek("ZZZ999", NOW) is None
    assert await store.handoffs.take("ABC234", NOW + 1) == offered
    assert await store.handoffs.take("ABC234", NOW + 2) is None
    assert await store.handoffs.peek("ABC234", NOW + 2) is None


async def test_an_expired_code_cannot_be_taken_and_goes_with_the_next_offer(store: Store) -> None:
    await store.handoffs.offer(handoff("OLD234", expires_at=NOW + 10), NOW)
    assert await store.handoffs.take("OLD234", NOW + 10) is None
    await store.handoffs.offer(handoff("NEW234"), NOW + 11)
    assert await store.handoffs.take("OLD234", NOW) is None  # gone, even asked as if at an earlier time
    assert await store.handoffs.take("NEW234", NOW + 12) is not None


async def test_two_takes_at_once_spend_the_code_once(new_store: StoreFactory) -> None:
    first, second = new_store(), new_store()  # two replicas (or two connections) on one database
    await first.open()
    await second.open()
    try:
        await first.handoffs.offer(handoff("RACE23"), NOW)
        taken = await asyncio.gather(*(s.handoffs.take("RACE23", NOW + 1) for s in (first, second, first, second)))
        assert sum(t is not None for t in taken) == 1
    finally:
        await first.close()
        await second.close()


async def test_links_point_at_a_home_never_at_another_link_and_go_with_unlink(store: Store) -> None:
    await store.handoffs.link("discord:7", "telegram:42", NOW)
    await store.handoffs.link("telegram:42", "web:w1", NOW + 1)  # the home itself links on: its alias follows
    assert await store.handoffs.links() == {"discord:7": "web:w1", "telegram:42": "web:w1"}
    await store.handoffs.link("discord:7", "slack:C1", NOW + 2)  # linked again: the new home replaces the old
    assert await store.handoffs.unlink("discord:7") == "slack:C1"
    assert await store.handoffs.unlink("discord:7") is None
    assert await store.handoffs.links() == {"telegram:42": "web:w1"}
    link_code = Handoff("LNK234", "telegram:42", "conv1", "telegram", "42", False, NOW + 600, link=True)
    await store.handoffs.offer(link_code, NOW)
    assert await store.handoffs.take("LNK234", NOW + 1) == link_code  # the code says it links
    assert await store.forget.forget_chat("web:w1") == {"chat_links": 1}  # either end of a link is the chat's
    assert await store.handoffs.links() == {}
