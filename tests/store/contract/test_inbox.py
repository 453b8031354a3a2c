"""Dedupe keys: a key is new once until it expires (or is taken back), across reopening, and purging removes only
expired keys."""

from __future__ import annotations

import asyncio

from bot.store import InboxEntry, Store
from tests.harness import entry_id
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


async def test_unsee_takes_back_one_key_so_its_redelivery_counts_as_new(store: Store) -> None:
    assert await store.inbox.seen("fs:event:1") is False
    assert await store.inbox.seen("fs:event:2") is False
    await store.inbox.unsee("fs:event:1")  # its event was not kept
    await store.inbox.unsee("fs:event:never")  # nothing recorded: nothing to take back
    assert await store.inbox.seen("fs:event:1") is False
    assert await store.inbox.seen("fs:event:1") is True
    assert await store.inbox.seen("fs:event:2") is True


async def test_the_same_key_at_once_is_new_exactly_once(store: Store) -> None:
    results = await asyncio.gather(*(store.inbox.seen("dc:7:99") for _ in range(20)))
    assert sorted(results) == [False] + [True] * 19


async def test_an_accepted_event_waits_in_the_inbox_until_finished(new_store: StoreFactory) -> None:
    store = new_store()
    await store.open()
    first = entry_id(await store.inbox.accept("tg:1:1", "tg:1", '{"text": "one"}'))
    second = entry_id(await store.inbox.accept("tg:2:1", "tg:2", '{"text": "二"}'))
    assert first is not None and second is not None and second > first
    assert await store.inbox.accept("tg:1:1", "tg:1", '{"text": "again"}') is None  # a redelivery
    assert await store.inbox.seen("tg:2:1") is True  # accepting records the dedupe key too
    await store.close()
    store = new_store()
    await store.open()
    try:
        assert await store.inbox.unfinished() == [InboxEntry(first, "tg:1", '{"text": "one"}', seq=1),
                                                  InboxEntry(second, "tg:2", '{"text": "二"}', seq=1)]
        await store.inbox.finish("tg:1", [first])
        await store.inbox.finish("tg:1", [])
        assert await store.inbox.unfinished() == [InboxEntry(second, "tg:2", '{"text": "二"}', seq=1)]
        assert await store.inbox.accept("tg:1:1", "tg:1", "{}") is None  # finished is still deduped
        await store.inbox.finish("tg:2", [second, second + 100])
        assert await store.inbox.unfinished() == []
    finally:
        await store.close()


async def test_the_same_event_accepted_at_once_is_queued_exactly_once(store: Store) -> None:
    entries = await asyncio.gather(*(store.inbox.accept("dc:7:100", "dc:7", "{}") for _ in range(20)))
    assert len([e for e in entries if e is not None]) == 1
    assert [e.id for e in await store.inbox.unfinished()] == [e.id for e in entries if e is not None]


async def test_the_messages_of_a_reply_in_progress_are_kept_with_its_entry(new_store: StoreFactory) -> None:
    """A restart finds which messages the cut reply already has, so it edits them instead of sending anew."""
    store = new_store()
    await store.open()
    entry = entry_id(await store.inbox.accept("tg:5:1", "tg:5", "{}"))
    other = entry_id(await store.inbox.accept("tg:5:2", "tg:5", "{}"))
    assert entry is not None and other is not None
    await store.inbox.replied("tg:5", entry, ["7"])
    await store.inbox.replied("tg:5", entry, ["7", "8"])  # a long reply went on in a second message
    await store.inbox.replied("tg:5", entry + 100, ["9"])  # finished meanwhile: nothing to note
    await store.close()
    store = new_store()
    await store.open()
    try:
        assert await store.inbox.unfinished() == [InboxEntry(entry, "tg:5", "{}", ("7", "8"), seq=1),
                                                  InboxEntry(other, "tg:5", "{}", seq=2)]
    finally:
        await store.close()


async def test_each_chat_numbers_its_entries_densely_and_keeps_the_platforms_order_key(store: Store) -> None:
    """A chat's sequence (1, 2, 3 … per chat, whoever accepted) is the order its owner runs it in; the platform's
    order key is kept with each entry, and a late arrival can take an earlier place (the hold's reorder)."""
    a1 = await store.inbox.accept("tg:1:10", "tg:1", "{}", order=1001)
    b1 = await store.inbox.accept("tg:2:10", "tg:2", "{}")
    a2 = await store.inbox.accept("tg:1:12", "tg:1", "{}", order=1003)
    a3 = await store.inbox.accept("tg:1:11", "tg:1", "{}", order=1002)  # redelivered late: accepted third
    assert a1 is not None and b1 is not None and a2 is not None and a3 is not None
    assert [(a1.seq, a2.seq, a3.seq), b1.seq] == [(1, 2, 3), 1]
    assert [(e.seq, e.order) for e in await store.inbox.waiting("tg:1")] == [(1, 1001), (2, 1003), (3, 1002)]
    await store.inbox.reorder("tg:1", [(a3.id, 2), (a2.id, 3)])
    assert [e.id for e in await store.inbox.waiting("tg:1")] == [a1.id, a3.id, a2.id]
    await store.inbox.finish("tg:1", [a1.id])
    a4 = await store.inbox.accept("tg:1:13", "tg:1", "{}", order=1004)
    assert a4 is not None and a4.seq == 4  # the sequence goes on past finished entries
