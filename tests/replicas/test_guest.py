"""`bothub chat` on the replicas' database is a guest, not a replica: beside a `bothub run` replica on one
PostgreSQL it takes no share of the chat partitions (the replica keeps answering every Telegram chat), and its own
terminal chat's partition is handed over to it when it needs it."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import TOKEN, FakeTelegram
from tests.postgres import PostgresServer
from tests.replicas.cluster import REPO, replica_env, replicas

pytestmark = pytest.mark.timeout(180)
PARTITIONS = 1024


async def read_until(stream: asyncio.StreamReader, wanted: str, within: float = 30.0) -> str:
    seen, deadline = "", time.monotonic() + within
    while wanted not in seen:
        line = await asyncio.wait_for(stream.readline(), max(0.1, deadline - time.monotonic()))
        assert line, f"the chat process ended before answering; it wrote: {seen[-2000:]}"
        seen += line.decode()
    return seen


async def test_bothub_chat_beside_a_replica_takes_only_its_own_chat(tmp_path: Path, postgres: PostgresServer) -> None:
    llm, tg = FakeOpenAI(), FakeTelegram()
    for server in (llm, tg):
        await server.start()
    url = await postgres.new_database()
    config = tmp_path / "chat.yaml"
    config.write_text(yaml.safe_dump({"data_dir": str(tmp_path / "chat-data")}), encoding="utf-8")
    try:
        async with replicas(tmp_path, ("a",), llm, url, {"TELEGRAM_BOT_TOKEN": TOKEN,
                                                          "TELEGRAM_API_BASE": tg.api_base}, {}) as (a,):
            chat = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", "--config", str(config), "chat", cwd=REPO,
                env=replica_env(llm, url, "terminal", {}), stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            assert chat.stdin is not None and chat.stdout is not None
            try:
                chat.stdin.write(b"hello from the terminal\n")
                await chat.stdin.drain()
                await read_until(chat.stdout, "hello from the terminal")  # the fake model echoes it
                await asyncio.sleep(3.0)  # three balances: a replica would have taken half by now
                assert (await a.replica())["partitions"] >= PARTITIONS - 1  # one is lent while the terminal answers
                tg.inject_message(4242, "still answered by the replica")
                await tg.wait_until(lambda: tg.bot_texts(4242) == ["still answered by the replica"], 20)
                chat.stdin.write(b"and once more\n")
                await chat.stdin.drain()
                await read_until(chat.stdout, "and once more")
            finally:
                chat.stdin.close()
                await asyncio.wait_for(chat.wait(), 30)
            assert chat.returncode == 0
            assert (await a.replica())["partitions"] >= PARTITIONS - 1
    finally:
        for server in (tg, llm):
            await server.stop()
