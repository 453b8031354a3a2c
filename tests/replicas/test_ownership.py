"""Two apps on one PostgreSQL, in one process: the chat's owner answers, wherever a message arrives."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.postgres import PostgresServer
from tests.replicas.cluster import chat_owned_by, settled


async def test_the_owner_answers_what_another_replica_accepted(tmp_path: Path, fake: FakeOpenAI,
                                                               postgres: PostgresServer) -> None:
    env = {"BOTHUB_DATABASE_URL": await postgres.new_database()}
    ra, rb = RecordingAdapter(), RecordingAdapter()
    for name in "ab":
        (tmp_path / name).mkdir()
    async with contextlib.AsyncExitStack() as stack:
        a = await stack.enter_async_context(running_app(tmp_path / "a", fake.base_url, adapters=(ra,),
                                                        env={**env, "BOTHUB_REPLICA_ID": "a"}))
        b_app = running_app(tmp_path / "b", fake.base_url, adapters=(rb,), env={**env, "BOTHUB_REPLICA_ID": "b"})
        b = await b_app.__aenter__()
        try:
            await settled(a.store.claims, b.store.claims)
            c1, c2 = chat_owned_by(a.store.claims), chat_owned_by(b.store.claims)
            await ra.say("one", c1, message_id="m1")
            await wait_for(lambda: ra.texts(c1) == ["one"])
            await rb.say("two", c1, message_id="m2")  # b accepts it; a owns the chat and answers
            await rb.say("two", c1, message_id="m2")  # a redelivery to b: deduped in the database
            await ra.say("three", c1, message_id="m3")
            await wait_for(lambda: ra.texts(c1) == ["one", "two", "three"])
            await ra.say("hello", c2, message_id="m4")  # a accepts it; b owns the chat and answers
            await wait_for(lambda: rb.texts(c2) == ["hello"])
            assert rb.texts(c1) == [] and ra.texts(c2) == []
            assert (a.lanes.owners.chats, b.lanes.owners.chats) == ([f"recording:{c1}"], [f"recording:{c2}"])
            assert a.lanes.owners.claims.replica == "a"
        finally:
            await b_app.__aexit__(None, None, None)  # b stops: its partitions are released
        await ra.say("again", c2, message_id="m5")
        await wait_for(lambda: ra.texts(c2) == ["again"])
        # the conversation moved with the chat: a sees b's earlier turn in the history it sends
        assert [m["content"] for m in fake.requests[-1]["body"]["messages"] if m["role"] == "user"] == ["hello",
                                                                                                      "again"]
    assert len(fake.requests) == 5
