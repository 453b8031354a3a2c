"""On PostgreSQL a change made through another process is in force within 2 s through NOTIFY alone (the poll is
set to a minute here, so only the notification can make it in time)."""

from __future__ import annotations

import time
from pathlib import Path

from bot.fleet.model import Agent, Binding, Identity
from bot.fleet.service import Fleet
from bot.messages import ChatRef
from bot.store.postgres import PostgresStore
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_cloud import TelegramCloud
from tests.fleet.conftest import SUPPORT_TOKEN, by_model, env_for, workspace
from tests.harness import running_app, wait_for
from tests.postgres import PostgresServer


async def test_a_change_through_another_replica_is_in_force_within_2_s(
        tmp_path: Path, fake: FakeOpenAI, cloud: TelegramCloud, postgres: PostgresServer) -> None:
    by_model(fake)
    url = await postgres.new_database()
    env = env_for(cloud) | {"BOTHUB_DATABASE_URL": url}
    workspace(tmp_path / "data", "helper", "You are Helper. persona-helper\n")
    other = PostgresStore(url)
    async with running_app(tmp_path, fake.base_url, ("telegram",), env=env, config={"fleet": {"poll": 60}}) as app:
        await other.open()
        try:
            fleet = Fleet(other.fleet, env, lambda: ([Agent(name="default")], []))
            await fleet.put_agent(Agent(name="helper", workspace=Path("ws/helper"), model="helper-model"), "r2")
            await fleet.put_identity(Identity(name="support", platform="telegram",
                                              credentials={"TELEGRAM_BOT_TOKEN": SUPPORT_TOKEN}), "r2")
            await fleet.put_binding(Binding(identity="support", agent="helper"), "r2")
            changed = time.monotonic()
            chat = ChatRef("telegram", "42", identity="support")
            await wait_for(lambda: "support" in app.bots.running and app.roster.for_chat(chat).agent is not None
                           and app.roster.for_chat(chat).agent.name == "helper", within=2)  # type: ignore[union-attr]
            print(f"\nchange through another replica → in force: {time.monotonic() - changed:.2f} s")
            support = cloud.bots[SUPPORT_TOKEN]
            support.inject_message(42, "hi")
            await wait_for(lambda: support.bot_texts(42) == ["[helper-model] ok"], within=10)
        finally:
            await other.close()
    await postgres.drop_database(url)
