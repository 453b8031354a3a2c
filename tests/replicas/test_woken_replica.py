"""A replica frozen mid-answer wakes to find its chats taken: it shows nothing. Its event loop is blocked (a
frozen process, as far as the loop can tell) while the model's answer arrives from another process and sits
in the socket, and its claims connection is ended, as a peer ends a silent replica's. On waking, the answer is
read before anything has noticed the lost claims; the reply is still not sent, because every platform call of
a chat's lane confirms the chat is this replica's (bot/delivery/fence.py), and a heartbeat older than the
takeover window is checked against the database first. The message waits in the inbox for the chat's next
owner (here the same replica, back a moment later), which answers it once."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg

from bot.store.postgres.claims import SILENT_AFTER
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.postgres import PostgresServer


@asynccontextmanager
async def model_in_another_process(first_token_delay: float) -> AsyncIterator[str]:
    """The fake model as its own process: it answers while this one's loop is blocked."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.openai_api", "--first-token-delay", str(first_token_delay),
        stdout=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        base_url = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        assert base_url.startswith("http://127.0.0.1:"), base_url
        yield base_url
    finally:
        proc.terminate()
        await proc.wait()


async def stored_user_messages(db: asyncpg.Connection) -> int:
    return int(await db.fetchval("SELECT count(*) FROM messages WHERE role = 'user'"))


async def test_a_replica_woken_after_its_chats_were_taken_sends_nothing(
        tmp_path: Path, postgres: PostgresServer) -> None:
    url = await postgres.new_database()
    adapter = RecordingAdapter()
    async with model_in_another_process(first_token_delay=1.0) as base_url, running_app(
            tmp_path, base_url, adapters=(adapter,), env={"BOTHUB_DATABASE_URL": url, "BOTHUB_REPLICA_ID": "a"}):
        db = await asyncpg.connect(url)
        try:
            await adapter.say("first", "c1", message_id="m1")
            await wait_for(lambda: adapter.texts("c1") == ["first"], within=15)
            await adapter.say("second", "c1", message_id="m2")
            for _ in range(500):  # the run has stored the message and asked the model, which waits a second
                if await stored_user_messages(db) == 2:
                    break
                await asyncio.sleep(0.01)
            assert await db.fetchval("SELECT pg_terminate_backend(backend) FROM bothub_replicas WHERE id = 'a'")
            time.sleep(SILENT_AFTER + 1.5)  # noqa: ASYNC251 - frozen on purpose: no heartbeat, the answer arrives
            await asyncio.sleep(2.0)  # woken: whatever it would send now, it sends
            assert adapter.texts("c1") == ["first"], "the woken replica answered a chat it no longer owned"
            await wait_for(lambda: adapter.texts("c1") == ["first", "second"], within=20)  # its owner, once
            await asyncio.sleep(1.0)
            assert adapter.texts("c1") == ["first", "second"]
            assert await db.fetchval("SELECT count(*) FROM inbox") == 0
        finally:
            await db.close()
