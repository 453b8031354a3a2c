"""The webhook is a role: two `bothub run` replicas on one PostgreSQL, no balancer, each with its own webhook
URL. Only the role's holder registers its URL (no last-one-wins; a failed registration is tried again);
SIGKILLed, the survivor takes the role and re-registers its own, and every later update is answered."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest

from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.postgres import PostgresServer
from tests.replicas.cluster import Replica, answers, inbox_drained, question, start_replica, stop_replica

pytestmark = pytest.mark.timeout(180)  # two `bothub run` processes and PostgreSQL on a loaded 2-core machine
CHATS = range(7000, 7020)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def hook(port: int) -> str:
    return f"http://127.0.0.1:{port}/telegram/webhook"


async def test_the_webhook_holder_killed_the_survivor_registers_and_answers_every_later_update(
        tmp_path: Path, postgres: PostgresServer) -> None:
    llm, tg = FakeOpenAI(), FakeTelegram()
    for server in (llm, tg):
        await server.start()
    url = await postgres.new_database()
    env = {"TELEGRAM_BOT_TOKEN": tg.token, "TELEGRAM_API_BASE": tg.api_base, "TELEGRAM_WEBHOOK_SECRET": "hook-secret"}
    started: list[Replica] = []
    tg.fail("setWebhook", 502, "Bad Gateway")  # the holder's first registration fails: it tries again
    try:
        for name in "ab":  # a starts first and takes the role
            port = free_port()
            settings = {"server": {"host": "127.0.0.1", "port": port}, "telegram": {"webhook_url": hook(port)}}
            started.append(await start_replica(tmp_path, name, llm, url, env, settings))
        a, b = started
        await tg.wait_until(lambda: tg.webhook is not None, 30)
        assert [c["url"] for c in tg.calls_of("setWebhook")] == [hook(a.port)] * 2  # b did not take it over

        for chat in CHATS:  # 10 a second: two replicas' answers together stay within the bot's global budget
            tg.inject_message(chat, question(chat, 0))
            await asyncio.sleep(0.1)
        await tg.wait_until(lambda: all(answers(tg, c) == [question(c, 0)] for c in CHATS), 60)
        await inbox_drained(url)

        a.kill()
        killed = time.monotonic()
        await tg.wait_until(lambda: tg.webhook is not None and tg.webhook["url"] == hook(b.port), 30)
        registered = time.monotonic() - killed
        print(f"\nwebhook holder SIGKILLed → the survivor re-registered in {registered * 1000:.0f} ms")
        for chat in CHATS:
            tg.inject_message(chat, question(chat, 1))
            await asyncio.sleep(0.1)
        await tg.wait_until(lambda: all(len(answers(tg, c)) >= 2 for c in CHATS), 60)
        await tg.quiet()
        assert all(answers(tg, c) == [question(c, 0), question(c, 1)] for c in CHATS)
        assert (await b.replica())["roles"]  # the survivor holds the role now
    finally:
        for replica in started:
            await stop_replica(replica)
        for server in (tg, llm):
            await server.stop()
