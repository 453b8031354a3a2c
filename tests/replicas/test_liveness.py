"""Liveness on a real PostgreSQL: a replica whose event loop stalls past its heartbeat deadline owns nothing
by its own clock: before its next write it sends its late heartbeat, which fails when a peer has ended its
claims connection meanwhile, so it writes nothing and drops its claims; nobody having taken over, it goes on.
(A peer ending a silent replica's claims connection: tests/replicas/test_freeze_failover.py.)"""

from __future__ import annotations

import asyncio
import threading
import time

import asyncpg
import pytest

from bot.store.claims import NotOwner, partition
from bot.store.postgres import PostgresStore
from bot.store.postgres.claims import SILENT_AFTER
from bot.tree.model import Message
from tests.harness import entry_id, wait_for


async def test_a_stalled_replica_writes_nothing_and_drops_its_claims(url: str) -> None:
    store, lost = PostgresStore(url, replica="a"), []
    await store.open()
    await store.claims.start(lambda _e, _s: None, lambda: lost.append("a"), lambda _p: None)
    try:
        assert await store.claims.claim("tg:1")
        conv = await store.conversations.create("tg:1")
        await store.conversations.append("tg:1", conv.id, [Message.new("user", "before", conv.root_id)])  # owned
        entry = entry_id(await store.inbox.accept("tg:1:m1", "tg:1", "{}"))
        assert partition("tg:2") != partition("tg:1")
        with pytest.raises(NotOwner):
            await store.conversations.append("tg:2", conv.id, [Message.new("user", "not ours")])
        time.sleep(SILENT_AFTER + 0.5)  # noqa: ASYNC251 -- the point: a blocked event loop sends no heartbeat
        assert not store.claims.holds("tg:1")
        await store.conversations.append("tg:1", conv.id, [Message.new("user", "late", conv.root_id)])
        assert store.claims.holds("tg:1") and lost == []  # nobody took over: the late heartbeat went out first
        peer = threading.Thread(target=asyncio.run, args=(_end_when_silent(url),))  # a peer, not frozen
        peer.start()
        time.sleep(SILENT_AFTER + 1.5)  # noqa: ASYNC251
        peer.join()
        with pytest.raises(NotOwner):  # its late heartbeat fails now: refused
            await store.conversations.append("tg:1", conv.id, [Message.new("user", "after")])
        with pytest.raises(NotOwner):
            await store.inbox.finish("tg:1", [entry or 0])
        await wait_for(lambda: lost == ["a"], within=5)  # and then it gives its claims up
        assert store.claims.partitions == frozenset()
        tree = await store.conversations.load("tg:1", conv.id, "")
        assert tree is not None
        assert [m.content for m in tree.messages.values() if m.role == "user"] == ["before", "late"]
        assert [e.id for e in await store.inbox.waiting("tg:1")] == [entry]
    finally:
        await store.claims.stop()
        await store.close()


async def _end_when_silent(url: str) -> None:
    """What a peer's heartbeat does: end the claims connection of a replica silent past the deadline."""
    peer = await asyncpg.connect(url)
    try:
        for _ in range(100):
            if await peer.fetchval("SELECT count(pg_terminate_backend(backend)) FROM bothub_replicas WHERE id = 'a' "
                                   "AND beat < now() - make_interval(secs => $1)", SILENT_AFTER):
                return
            await asyncio.sleep(0.1)
        raise AssertionError("a never went silent")
    finally:
        await peer.close()
