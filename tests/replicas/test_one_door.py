"""The one door (bot/lanes.py): work that reaches a replica which does not own the chat runs on the chat's owner.

Two apps on one PostgreSQL in one process, each with its own platform adapter and its own clock. Inbox
entries (a message as the HTTP API or any adapter hands it in, `/retry`, a scheduled run) are answered by
the owner at once; work that is no inbox entry (a dashboard action) waits until its replica owns the chat:
the owner hands the chat's partition over once the chat is idle.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.chats.sessions import SessionKey
from bot.web.actions import branch_here
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.postgres import PostgresServer
from tests.replicas.cluster import chat_owned_by, settled
from tests.scheduler.conftest import FakeClock

T0 = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)


async def test_work_arriving_at_a_replica_that_does_not_own_the_chat_runs_on_its_owner(
        tmp_path: Path, fake: FakeOpenAI, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"BOTHUB_DATABASE_URL": await postgres.new_database()}
    ra, rb, clock_b = RecordingAdapter(), RecordingAdapter(), FakeClock(T0)
    for name in "ab":
        (tmp_path / name).mkdir()
    async with contextlib.AsyncExitStack() as stack:
        a = await stack.enter_async_context(running_app(tmp_path / "a", fake.base_url, adapters=(ra,),
                                                        env={**env, "BOTHUB_REPLICA_ID": "a"}, clock=FakeClock(T0)))
        b = await stack.enter_async_context(running_app(tmp_path / "b", fake.base_url, adapters=(rb,),
                                                        env={**env, "BOTHUB_REPLICA_ID": "b"}, clock=clock_b))
        await settled(a.store.claims, b.store.claims)
        c1 = chat_owned_by(a.store.claims)
        chat = SessionKey("recording", c1)
        await ra.say("/remind in 1m stretch", c1, message_id="m1")  # a owns the chat; the job is due in a minute
        await wait_for(lambda: len(ra.texts(c1)) == 1)

        await rb.say("hello", c1, message_id="m2")  # a message as the HTTP API hands one in: b accepts, a answers
        await wait_for(lambda: ra.texts(c1)[1:] == ["hello"])
        first_answer = a.lanes.session(chat).path[-1]
        await rb.say("/retry", c1, message_id="m3")  # an inbox entry too: a answers again, as a new branch
        await wait_for(lambda: ra.texts(c1)[1:] == ["hello", "hello"])
        assert a.lanes.session(chat).path[-1].id != first_answer.id
        assert rb.texts(c1) == [] and len(fake.requests) == 2

        clock_b.advance(minutes=1)
        await b.scheduler.tick()  # b queues the due run (or its loop did): an inbox entry, so the owner runs it
        await wait_for(lambda: "⏰ Reminder: stretch" in ra.texts(c1))
        conv_id = a.lanes.session(chat).conversation_id
        assert conv_id is not None
        assert not b.store.claims.holds(chat.storage_key)
        # the dashboard's "branch here" at the non-owner: b asks a for the chat's partition, a hands it over
        # once the chat is idle, and b runs it then
        branch = await asyncio.wait_for(branch_here(b.hub.services, b.store.dashboard, "test", chat.storage_key,
                                                    conv_id, first_answer.id), 15)
        assert branch == "moved"
        await b.hub.idle()
        assert b.store.claims.holds(chat.storage_key) and not a.store.claims.holds(chat.storage_key)
        assert ra.texts(c1).count("⏰ Reminder: stretch") == 1 and "⏰ Reminder: stretch" not in rb.texts(c1)
        assert first_answer.id in [m.id for m in b.lanes.session(chat).path]  # the branch was moved by b
        assert [e.action for e in await b.store.dashboard.list_audit(5)] == ["branch"]
