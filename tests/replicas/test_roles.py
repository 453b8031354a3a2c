"""Roles across `bothub run` replicas on one PostgreSQL: Telegram's single long poller and Discord's gateway
shards move to a live replica when their holder is SIGKILLed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fakes.discord_api import TOKEN as DISCORD_TOKEN
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.discord_guild import (
    APP_ID,
    BOT_USER,
    CHANNEL_ID,
    GUILD2_CHANNEL_ID,
    GUILD2_ID,
    GUILD_ID,
    other_guild_payload,
)
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import wait_for
from tests.postgres import PostgresServer
from tests.replicas.cluster import Replica, inbox_drained, replicas

pytestmark = pytest.mark.timeout(180)  # two `bothub run` processes and PostgreSQL on a loaded 2-core machine


async def _until(replica: Replica, group: str, shards: list[int], within: float = 10.0) -> float:
    """Poll /readyz until `replica` holds exactly `shards` of `group`; returns how long that took."""
    started = time.monotonic()
    while (await replica.replica())["roles"].get(group) != shards:
        assert time.monotonic() - started < within, f"{replica.name} never held {group} {shards}"
    return time.monotonic() - started


async def test_the_long_poller_moves_to_another_replica_within_five_seconds(tmp_path: Path,
                                                                             postgres: PostgresServer) -> None:
    llm, tg = FakeOpenAI(), FakeTelegram()
    for server in (llm, tg):
        await server.start()
    env = tg.env
    url = await postgres.new_database()
    try:
        async with replicas(tmp_path, ("a", "b"), llm, url, env, {}) as (a, b):
            await _until(a, "telegram-poller", [0])  # the first replica up polls; the second stands by
            await _until(b, "telegram-poller", [])
            tg.inject_message(42, "before")
            await tg.wait_until(lambda: tg.bot_texts(42) == ["before"], within=20)
            assert tg.overlapping_polls == 0
            await inbox_drained(url)
            a.kill()
            moved = await _until(b, "telegram-poller", [0])
            print(f"\npoller moved {moved * 1000:.0f} ms after the SIGKILL")
            assert moved < 5.0
            tg.inject_message(42, "after")
            await tg.wait_until(lambda: len(tg.bot_texts(42)) >= 2, within=20)
            await tg.quiet()
            assert tg.bot_texts(42) == ["before", "after"]
    finally:
        for server in (tg, llm):
            await server.stop()


def _texts(fake: FakeDiscord, channel_id: str) -> list[str]:
    return [m["content"] for m in fake.messages.values() if m["channel_id"] == channel_id]


async def _ask(fake: FakeDiscord, channel_id: str, guild_id: str, text: str) -> None:
    payload = fake.user_message(f"<@{APP_ID}> {text}", channel_id=channel_id, mentions=(BOT_USER,),
                                guild_id=guild_id)
    await fake.dispatch("MESSAGE_CREATE", payload)
    await wait_for(lambda: f"[Ann] {text}" in _texts(fake, channel_id), within=20)  # the fake LLM echoes


async def test_discord_shards_are_shared_and_a_dead_replicas_shards_are_taken_over(
        tmp_path: Path, postgres: PostgresServer) -> None:
    llm, dc = FakeOpenAI(), FakeDiscord()
    dc.other_guilds.append(other_guild_payload())  # shard 0 of 2; the test guild is on shard 1
    for server in (llm, dc):
        await server.start()
    env = {"DISCORD_BOT_TOKEN": DISCORD_TOKEN, "DISCORD_API_BASE": dc.api_base, "DISCORD_GATEWAY_URL": dc.gateway_url}
    url = await postgres.new_database()
    try:
        async with replicas(tmp_path, ("a", "b"), llm, url, env, {"discord": {"shard_count": 2}}) as (a, b):
            await _until(a, "discord-shard", [0])  # a had both; b's arrival takes one off it
            await _until(b, "discord-shard", [1])
            await wait_for(lambda: dc.connected_shards() == {0, 1}, within=20)
            await _ask(dc, GUILD2_CHANNEL_ID, GUILD2_ID, "on shard zero")
            await _ask(dc, CHANNEL_ID, GUILD_ID, "on shard one")
            identified = len(dc.identifies)
            await inbox_drained(url)
            b.kill()
            started = time.monotonic()
            await _until(a, "discord-shard", [0, 1])
            await wait_for(lambda: dc.connected_shards() == {0, 1} and len(dc.identifies) > identified, within=20)
            print(f"\nshard 1 running again {(time.monotonic() - started) * 1000:.0f} ms after the SIGKILL")
            await _ask(dc, CHANNEL_ID, GUILD_ID, "after the kill")
    finally:
        for server in (dc, llm):
            await server.stop()
