"""A chat's order is the platform's where the platform may deliver out of it (bot/replicas/order.py).

The case: Telegram POSTs update 100 to a replica that dies holding the request (nothing stored), so Telegram
delivers it again, through the balancer, to another replica; update 101 of the same chat had reached a live
replica meanwhile and was accepted first. The chat's owner holds a fresh arrival back a moment, so 100 takes
its place before 101 in the chat's sequence and is answered first (PostgreSQL, two replicas, the redelivery
accepted by the replica that does not own the chat). The hold applies only while chats change hands: one
process, or replicas in steady state, answer at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from pathlib import Path

import asyncpg
import pytest

from bot.chats.sessions import SessionKey
from bot.replicas import ownership
from bot.replicas.order import ORDER_HOLD
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import ROOMY, RecordingAdapter, running_app, wait_for
from tests.postgres import PostgresServer
from tests.replicas.cluster import chat_owned_by, settled

REORDERS = dataclasses.replace(ROOMY, reorders=True)  # a platform that may deliver out of its order


async def test_a_redelivered_earlier_update_is_answered_before_the_later_one_that_overtook_it(
        tmp_path: Path, fake: FakeOpenAI, postgres: PostgresServer) -> None:
    url = await postgres.new_database()
    ra, rb = RecordingAdapter(REORDERS), RecordingAdapter(REORDERS)
    for name in "ab":
        (tmp_path / name).mkdir()
    async with contextlib.AsyncExitStack() as stack:
        a = await stack.enter_async_context(running_app(tmp_path / "a", fake.base_url, adapters=(ra,),
                                                        env={"BOTHUB_DATABASE_URL": url, "BOTHUB_REPLICA_ID": "a"}))
        b = await stack.enter_async_context(running_app(tmp_path / "b", fake.base_url, adapters=(rb,),
                                                        env={"BOTHUB_DATABASE_URL": url, "BOTHUB_REPLICA_ID": "b"}))
        await settled(a.store.claims, b.store.claims)
        chat = chat_owned_by(a.store.claims)
        await ra.say("first", chat, message_id="99", order=99)
        await wait_for(lambda: ra.texts(chat) == ["first"])
        await ra.say("later", chat, message_id="101", order=101)  # 101 overtook 100 (its replica died)
        await asyncio.sleep(ORDER_HOLD / 3)
        await rb.say("earlier", chat, message_id="100", order=100)  # 100 again, at the other replica
        await wait_for(lambda: len(ra.texts(chat)) == 3)
        await a.hub.idle()
        assert ra.texts(chat) == ["first", "earlier", "later"] and rb.texts(chat) == []
        conn = await asyncpg.connect(url)
        try:
            rows = await conn.fetch("SELECT content FROM messages WHERE role = 'user' ORDER BY seq")
            assert [r[0] for r in rows] == ["first", "earlier", "later"]  # the tree in the platform's order
            assert await conn.fetchval("SELECT last FROM inbox_order WHERE session = $1",
                                       SessionKey("recording", chat).storage_key) == 3  # dense: 3 accepted
        finally:
            await conn.close()


async def test_in_steady_state_nothing_is_held_back(tmp_path: Path, fake: FakeOpenAI, postgres: PostgresServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """One process never holds (nothing can be redelivered out of order by a failover); replicas hold only while
    chats change hands: once settled, an answer starts at once, whatever the platform."""
    adapter = RecordingAdapter(REORDERS)
    async with running_app(tmp_path, fake.base_url, adapters=(adapter,)) as app:
        assert not app.lanes.owners.settling
        started = asyncio.get_running_loop().time()
        await adapter.say("two", "c1", message_id="2", order=2)
        await wait_for(lambda: adapter.texts("c1") == ["two"])
        assert asyncio.get_running_loop().time() - started < ORDER_HOLD  # not held
    monkeypatch.setattr(ownership, "SETTLING", 4.0)  # long enough to be seen after start on a loaded machine
    url = await postgres.new_database()
    (tmp_path / "replica").mkdir()
    replica = RecordingAdapter(REORDERS)
    async with running_app(tmp_path / "replica", fake.base_url, adapters=(replica,),
                           env={"BOTHUB_DATABASE_URL": url, "BOTHUB_REPLICA_ID": "a"}) as app:
        await settled(app.store.claims)
        assert app.lanes.owners.settling  # it has just taken its partitions
        await wait_for(lambda: not app.lanes.owners.settling, within=20)  # SETTLING after its last take
        started = asyncio.get_running_loop().time()
        await replica.say("now", "c9", message_id="5", order=5)
        await wait_for(lambda: replica.texts("c9") == ["now"])
        assert asyncio.get_running_loop().time() - started < ORDER_HOLD
        quiet = RecordingAdapter()  # a platform that keeps its order is not held back
        assert not quiet.capabilities.reorders
