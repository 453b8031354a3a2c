"""The Telegram poller confirms only what is stored: two `bothub run` replicas polling one bot on one PostgreSQL,
the poller SIGKILLed in the middle of taking a batch into the inbox. Telegram hands the unconfirmed rest to
the survivor, the inbox's dedupe drops what was stored already: every message answered once, in order."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import asyncpg
import pytest

from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.postgres import PostgresServer
from tests.replicas.cluster import answers, question, replicas

pytestmark = pytest.mark.timeout(180)  # two `bothub run` processes and PostgreSQL on a loaded 2-core machine
CHATS = range(9100, 9160)
PER_CHAT = 5  # 300 updates: three getUpdates batches of 100
MID_BATCH = 40  # updates stored when the poller is killed: by then a poller that confirms early had confirmed 100


async def stored(db: asyncpg.Connection) -> int:
    return int(await db.fetchval("SELECT count(*) FROM seen_events WHERE key LIKE 'telegram:%'"))


async def test_the_poller_killed_mid_batch_loses_nothing_and_doubles_nothing(
        tmp_path: Path, postgres: PostgresServer) -> None:
    llm, tg = FakeOpenAI(first_token_delay=3.0), FakeTelegram()  # nothing is answered before the kill
    for server in (llm, tg):
        await server.start()
    url = await postgres.new_database()
    env = tg.env
    db = await asyncpg.connect(url)
    try:
        async with replicas(tmp_path, ("a", "b"), llm, url, env, {}) as (a, b):
            assert (await a.replica())["roles"].get("telegram-poller") == [0]
            for n in range(PER_CHAT):
                for chat in CHATS:
                    tg.inject_message(chat, question(chat, n))
            deadline = time.monotonic() + 30
            while not MID_BATCH <= await stored(db) < len(CHATS) * PER_CHAT:
                assert time.monotonic() < deadline, "the poller never took a batch"
                await asyncio.sleep(0.005)
            a.pause()
            taken, confirmed = await stored(db), tg.updates.confirmed
            a.kill()
            print(f"\npoller killed with {taken} of {len(CHATS) * PER_CHAT} updates stored, {confirmed} confirmed")
            assert confirmed <= taken < len(CHATS) * PER_CHAT  # mid-batch; never confirmed what was not stored
            await tg.wait_until(lambda: all(len(answers(tg, c)) >= PER_CHAT for c in CHATS), 120)
            await tg.quiet()
            assert (await b.replica())["roles"].get("telegram-poller") == [0]
    finally:
        await db.close()
        for server in (tg, llm):
            await server.stop()
    wrong = {c: answers(tg, c) for c in CHATS if answers(tg, c) != [question(c, n) for n in range(PER_CHAT)]}
    assert not wrong, f"{len(wrong)} chats lost or doubled a message, e.g. {list(wrong.items())[:3]}"
