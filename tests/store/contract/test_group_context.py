"""The group-context ring: capped by count and by age on every insert, a redelivery kept once, one chat's
lines never in another's (a thread is a chat of its own), quiet chats purged by age."""

from __future__ import annotations

import asyncio

from bot.store import HeardLine, Store

A, A_THREAD, B = "test:-100", "test:-100#7", "test:-200"
EVERYTHING = {"since": 0.0, "limit": 1000}


async def test_the_ring_keeps_the_newest_lines_up_to_its_cap(store: Store) -> None:
    for n in range(35):
        await store.group_context.keep(A, f"m{n}", HeardLine(1000.0 + n, f"user{n % 3}", f"line {n}"),
                                       limit=30, since=0.0)
    lines = await store.group_context.recent(A, **EVERYTHING)
    assert [line.text for line in lines] == [f"line {n}" for n in range(5, 35)]
    assert lines[0] == HeardLine(1005.0, "user2", "line 5")
    assert [line.text for line in await store.group_context.recent(A, since=0.0, limit=3)] == [
        "line 32", "line 33", "line 34"]  # the newest few, still oldest first


async def test_a_redelivered_message_is_kept_once(store: Store) -> None:
    for _ in range(3):
        await store.group_context.keep(A, "m1", HeardLine(1.0, "Ann", "hello"), limit=30, since=0.0)
    await store.group_context.keep(A, "m2", HeardLine(2.0, "Bob", "hi"), limit=30, since=0.0)
    assert await store.group_context.recent(A, **EVERYTHING) == [HeardLine(1.0, "Ann", "hello"),
                                                                 HeardLine(2.0, "Bob", "hi")]


async def test_lines_past_the_age_limit_are_neither_shown_nor_kept(store: Store) -> None:
    await store.group_context.keep(A, "old", HeardLine(100.0, "Ann", "old news"), limit=30, since=0.0)
    await store.group_context.keep(A, "mid", HeardLine(200.0, "Bob", "middle"), limit=30, since=0.0)
    assert [x.text for x in await store.group_context.recent(A, since=150.0, limit=30)] == ["middle"]
    await store.group_context.keep(A, "new", HeardLine(300.0, "Cy", "fresh"), limit=30, since=150.0)
    assert [x.text for x in await store.group_context.recent(A, **EVERYTHING)] == ["middle", "fresh"]


async def test_chats_and_threads_have_rings_of_their_own(store: Store) -> None:
    await asyncio.gather(*(store.group_context.keep(chat, "m1", HeardLine(1.0, "Ann", f"in {chat}"),
                                                    limit=2, since=0.0) for chat in (A, A_THREAD, B)))
    for n in range(5):  # filling one ring trims nobody else's
        await store.group_context.keep(B, f"b{n}", HeardLine(2.0 + n, "Bob", f"b{n}"), limit=2, since=0.0)
    assert await store.group_context.recent(A, **EVERYTHING) == [HeardLine(1.0, "Ann", f"in {A}")]
    assert await store.group_context.recent(A_THREAD, **EVERYTHING) == [HeardLine(1.0, "Ann", f"in {A_THREAD}")]
    assert [x.text for x in await store.group_context.recent(B, **EVERYTHING)] == ["b3", "b4"]
    assert await store.group_context.recent("test:-300", **EVERYTHING) == []


async def test_purge_removes_what_quiet_chats_left_behind(store: Store) -> None:
    for chat, at in ((A, 10.0), (A, 50.0), (B, 20.0), (B, 90.0)):
        await store.group_context.keep(chat, f"{at}", HeardLine(at, "Ann", str(at)), limit=30, since=0.0)
    assert await store.group_context.purge(before=60.0) == 3
    assert await store.group_context.purge(before=60.0) == 0
    assert await store.group_context.recent(A, **EVERYTHING) == []
    assert [x.text for x in await store.group_context.recent(B, **EVERYTHING)] == ["90.0"]
