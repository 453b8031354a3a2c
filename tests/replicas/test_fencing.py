"""Fencing on a real PostgreSQL: a replica whose partition another replica has taken over writes nothing, even
when it does not know yet (its clock says it is live): each tree write and inbox finish names the partition's
epoch, and the database refuses a stale one in the same statement (bot/store/postgres/schema_replicas.py)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import asyncpg
import pytest

from bot.chats.sessions import SessionKey
from bot.store.claims import NotOwner, partition
from bot.store.postgres import PostgresStore
from bot.tree.model import Message
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, entry_id, running_app, wait_for
from tests.postgres import PostgresServer


async def _started(url: str, name: str) -> PostgresStore:
    store = PostgresStore(url, replica=name)
    await store.open()
    await store.claims.start(lambda _e, _s: None, lambda: None, lambda _p: None)
    return store


async def _user_texts(store: PostgresStore, chat: str, conv_id: str) -> list[str]:
    tree = await store.conversations.load(chat, conv_id, "")
    assert tree is not None
    return [m.content for m in tree.messages.values() if m.role == "user"]


async def test_a_replica_whose_partition_was_taken_over_writes_nothing(url: str) -> None:
    a, b = await _started(url, "a"), await _started(url, "b")
    try:
        assert await a.claims.claim("tg:1")
        conv = await a.conversations.create("tg:1")
        await a.conversations.append("tg:1", conv.id, [Message.new("user", "before", conv.root_id)])
        entry = entry_id(await a.inbox.accept("tg:1:m1", "tg:1", "{}"))
        assert entry is not None
        # a's claims connection is ended (what a peer does to a silent replica) and b takes the partition, before
        # a has noticed: by its own clock a is still live and owns the chat (a write delayed past a takeover)
        watch = a.claims._watch
        assert watch is not None
        watch.cancel()  # a does not check its connection again during this test: it has not noticed yet
        with contextlib.suppress(BaseException):
            await watch
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("SELECT pg_terminate_backend(backend) FROM bothub_replicas WHERE id = 'a'")
        finally:
            await conn.close()
        assert await wait_for_claim(b, "tg:1")
        assert a.claims.holds("tg:1")  # a does not know
        with pytest.raises(NotOwner, match="no longer owns"):
            await a.conversations.append("tg:1", conv.id, [Message.new("user", "stale", conv.root_id)])
        with pytest.raises(NotOwner):
            await a.inbox.finish("tg:1", [entry])
        with pytest.raises(NotOwner):
            await a.inbox.replied("tg:1", entry, ["41"])
        assert not a.claims.holds("tg:1") and a.claims.partitions == frozenset()  # refused once, it trusts none
        assert await _user_texts(b, "tg:1", conv.id) == ["before"]  # nothing landed
        [waiting] = await b.inbox.waiting("tg:1")
        assert (waiting.id, waiting.replies) == (entry, ())
        await b.conversations.append("tg:1", conv.id, [Message.new("user", "b's")])  # the new owner writes
        await b.inbox.finish("tg:1", [entry])
        assert await b.inbox.waiting("tg:1") == []
    finally:
        for store in (a, b):
            await store.claims.stop()
            await store.close()


async def wait_for_claim(store: PostgresStore, chat: str) -> bool:
    """The server frees a terminated backend's locks a moment after it is told to (and a replica that dropped
    its claims reconnects within a second)."""
    for _ in range(100):
        if await store.claims.claim(chat):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_a_bumped_epoch_refuses_the_holder_of_the_lock(url: str) -> None:
    """The epoch alone decides: a replica that still holds the partition's lock but not its epoch is refused."""
    a = await _started(url, "a")
    try:
        assert await a.claims.claim("tg:2")
        conv = await a.conversations.create("tg:2")
        entry = entry_id(await a.inbox.accept("tg:2:m1", "tg:2", "{}"))
        conn = await asyncpg.connect(url)
        try:
            await conn.execute("UPDATE bothub_partitions SET epoch = epoch + 1 WHERE p = $1", partition("tg:2"))
        finally:
            await conn.close()
        with pytest.raises(NotOwner):
            await a.conversations.append("tg:2", conv.id, [Message.new("user", "stale", conv.root_id)])
        assert await _user_texts(a, "tg:2", conv.id) == []
        assert not a.claims.holds("tg:2")
        assert await wait_for_claim(a, "tg:2")  # reconnected and taken again: a new epoch, and its writes land
        await a.conversations.append("tg:2", conv.id, [Message.new("user", "fresh", conv.root_id)])
        await a.inbox.finish("tg:2", [entry or 0])
        assert await _user_texts(a, "tg:2", conv.id) == ["fresh"] and await a.inbox.waiting("tg:2") == []
    finally:
        await a.claims.stop()
        await a.close()


async def test_a_fenced_run_is_abandoned_without_a_reply_and_answered_once_by_the_owner(
        tmp_path: Path, fake: FakeOpenAI, postgres: PostgresServer) -> None:
    """The run's first write (the user's message) is refused: nothing is shown in the chat, nothing crashes,
    the entry waits, and the chat's next owner (here the same replica, taking the partition back at a sweep)
    answers it once."""
    url = await postgres.new_database()
    adapter = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(adapter,),
                           env={"BOTHUB_DATABASE_URL": url, "BOTHUB_REPLICA_ID": "a"}) as app:
        await adapter.say("first", "c1", message_id="m1")
        await wait_for(lambda: adapter.texts("c1") == ["first"])
        key = SessionKey("recording", "c1").storage_key
        conn = await asyncpg.connect(url)
        try:
            await conn.execute("UPDATE bothub_partitions SET epoch = epoch + 1 WHERE p = $1", partition(key))
            await adapter.say("second", "c1", message_id="m2")
            await wait_for(lambda: not app.store.claims.holds(key), within=5)
            assert adapter.texts("c1") == ["first"]  # no reply, no error notice from the fenced run
            await wait_for(lambda: adapter.texts("c1") == ["first", "second"], within=15)  # taken back, answered
            await app.hub.idle()
            assert adapter.texts("c1") == ["first", "second"]
            assert await conn.fetchval("SELECT count(*) FROM inbox") == 0
            rows = await conn.fetch("SELECT content FROM messages WHERE role = 'user' ORDER BY seq")
            assert [r[0] for r in rows] == ["first", "second"]  # the refused write did not land
        finally:
            await conn.close()
