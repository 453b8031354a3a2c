"""Dedupe keys: a key is new once until it expires, across reopening, and purging removes only expired keys."""

from __future__ import annotations

import asyncio

from bot.store import Store
from tests.store.conftest import StoreFactory


async def test_seen_dedupes_across_reopen_until_expiry(new_store: StoreFactory) -> None:
    now = [1000.0]
    store = new_store(clock=lambda: now[0])
    await store.open()
    assert await store.inbox.seen("tg:1:42", ttl=60) is False
    assert await store.inbox.seen("tg:1:42", ttl=60) is True
    assert await store.inbox.seen("tg:2:42", ttl=60) is False  # another chat's event with the same id
    await store.close()
    store = new_store(clock=lambda: now[0])
    await store.open()
    try:
        assert await store.inbox.seen("tg:1:42", ttl=60) is True
        now[0] += 61
        assert await store.inbox.seen("tg:1:43", ttl=60) is False
        assert await store.inbox.purge_expired() == 2  # tg:1:42 and tg:2:42; tg:1:43 stays
        assert await store.inbox.purge_expired() == 0
        assert await store.inbox.seen("tg:1:42", ttl=60) is False  # expired: counts as new again
        assert await store.inbox.seen("tg:1:43", ttl=60) is True
    finally:
        await store.close()


async def test_the_same_key_at_once_is_new_exactly_once(store: Store) -> None:
    results = await asyncio.gather(*(store.inbox.seen("dc:7:99") for _ in range(20)))
    assert sorted(results) == [False] + [True] * 19
