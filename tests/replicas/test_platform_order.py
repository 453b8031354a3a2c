"""A chat's order is the platform's where the platform may deliver out of it (bot/replicas/order.py).

The case: Telegram POSTs update 100 to a replica that dies holding the request (nothing stored), so Telegram
delivers it again, through the balancer, to another replica; update 101 of the same chat had reached a live
replica meanwhile and was accepted first. The chat's owner holds a fresh arrival back a moment, so 100 takes
its place before 101 in the chat's sequence and is answered first. On PostgreSQL with two replicas (the
redelivery accepted by the replica that does not own the chat) and on SQLite (one process).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from pathlib import Path

import asyncpg

from bot.chats.sessions import SessionKey
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


async def test_one_process_answers_in_the_platforms_order_within_the_hold_and_in_arrival_order_past_it(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    adapter = RecordingAdapter(REORDERS)
    async with running_app(tmp_path, fake.base_url, adapters=(adapter,)) as app:
        await adapter.say("two", "c1", message_id="2", order=2)
        await adapter.say("one", "c1", message_id="1", order=1)  # within the hold: takes its place
        await wait_for(lambda: len(adapter.texts("c1")) == 2)
        await app.hub.idle()
        await adapter.say("four", "c1", message_id="4", order=4)
        await asyncio.sleep(ORDER_HOLD * 2)
        await adapter.say("three", "c1", message_id="3", order=3)  # past the hold: four is answered already
        await wait_for(lambda: len(adapter.texts("c1")) == 4)
        await app.hub.idle()
        assert adapter.texts("c1") == ["one", "two", "four", "three"]
        quiet = RecordingAdapter()  # a platform that keeps its order is not held back
        assert not quiet.capabilities.reorders
