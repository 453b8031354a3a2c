"""Dedupe keys: a key is new once until it expires, across reopening, and purging removes only expired keys."""

from __future__ import annotations

import asyncio

from bot.store import InboxEntry, Store
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


async def test_an_accepted_event_waits_in_the_inbox_until_finished(new_store: StoreFactory) -> None:
    store = new_store()
    await store.open()
    first = await store.inbox.accept("tg:1:1", "tg:1", '{"text": "one"}')
    second = await store.inbox.accept("tg:2:1", "tg:2", '{"text": "二"}')
    assert first is not None and second is not None and second > first
    assert await store.inbox.accept("tg:1:1", "tg:1", '{"text": "again"}') is None  # a redelivery
    assert await store.inbox.seen("tg:2:1") is True  # accepting records the dedupe key too
    await store.close()
    store = new_store()
    await store.open()
    try:
        assert await store.inbox.unfinished() == [InboxEntry(first, "tg:1", '{"text": "one"}'),
                                                  InboxEntry(second, "tg:2", '{"text": "二"}')]
        await store.inbox.finish("tg:1", [first])
        await store.inbox.finish("tg:1", [])
        assert await store.inbox.unfinished() == [InboxEntry(second, "tg:2", '{"text": "二"}')]
        assert await store.inbox.accept("tg:1:1", "tg:1", "{}") is None  # finished is still deduped
        await store.inbox.finish("tg:2", [second, second + 100])
        assert await store.inbox.unfinished() == []
    finally:
        await store.close()


async def test_the_same_event_accepted_at_once_is_queued_exactly_once(store: Store) -> None:
    entries = await asyncio.gather(*(store.inbox.accept("dc:7:100", "dc:7", "{}") for _ in range(20)))
    assert len([e for e in entries if e is not None]) == 1
    assert [e.id for e in await store.inbox.unfinished()] == [e for e in entries if e is not None]


async def test_the_messages_of_a_reply_in_progress_are_kept_with_its_entry(new_store: StoreFactory) -> None:
    """A restart finds which messages the cut reply already has, so it edits them instead of sending anew."""
    store = new_store()
    await store.open()
    entry = await store.inbox.accept("tg:5:1", "tg:5", "{}")
    other = await store.inbox.accept("tg:5:2", "tg:5", "{}")
    assert entry is not None and other is not None
    await store.inbox.replied("tg:5", entry, ["7"])
    await store.inbox.replied("tg:5", entry, ["7", "8"])  # a long reply went on in a second message
    await store.inbox.replied("tg:5", entry + 100, ["9"])  # finished meanwhile: nothing to note
    await store.close()
    store = new_store()
    await store.open()
    try:
        assert await store.inbox.unfinished() == [InboxEntry(entry, "tg:5", "{}", ("7", "8")),
                                                  InboxEntry(other, "tg:5", "{}")]
    finally:
        await store.close()
