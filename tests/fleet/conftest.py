"""Several Telegram bots against one fake Bot API, stored agents with workspaces of their own, and helpers to
put agents, identities and bindings into a data folder before the hub starts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest_asyncio

from bot.fleet.model import Agent, Binding, Identity
from bot.fleet.secrets import new_key
from bot.fleet.service import Fleet
from bot.store.sqlite import SqliteStore
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.fakes.telegram_api import TOKEN
from tests.fakes.telegram_cloud import TelegramCloud

SUPPORT_TOKEN = "223456:SUPPORT-TOKEN"
CODER_TOKEN = "323456:CODER-TOKEN"
KEY = new_key()


@pytest_asyncio.fixture
async def cloud() -> AsyncIterator[TelegramCloud]:
    server = TelegramCloud()
    await server.start()
    server.add_bot(TOKEN, "hub_test_bot", 1000001)
    server.add_bot(SUPPORT_TOKEN, "support_bot", 2000002)
    server.add_bot(CODER_TOKEN, "coder_bot", 3000003)
    yield server
    await server.stop()


def env_for(cloud: TelegramCloud) -> dict[str, str]:
    return {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": cloud.api_base, "BOTHUB_SECRET_KEY": KEY}


def by_model(llm: FakeOpenAI) -> None:
    """Every answer names the model it was asked of, so a reply shows which agent wrote it."""
    llm.responder = lambda body: Text(f"[{body['model']}] ok")


def workspace(data: Path, name: str, soul: str) -> Path:
    folder = data / "ws" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SOUL.md").write_text(soul, encoding="utf-8")
    return Path("ws") / name


AGENTS = (
    Agent(name="helper", workspace=Path("ws/helper"), model="helper-model"),
    Agent(name="coder", workspace=Path("ws/coder"), model="coder-model", admins=("42",)),
)
IDENTITIES = (
    Identity(name="support", platform="telegram", credentials={"TELEGRAM_BOT_TOKEN": SUPPORT_TOKEN}),
    Identity(name="coder", platform="telegram", credentials={"TELEGRAM_BOT_TOKEN": CODER_TOKEN}),
)
BINDINGS = (Binding(identity="support", agent="helper"), Binding(identity="coder", agent="coder"))


async def seed(data: Path, env: dict[str, str], agents: Sequence[Agent] = AGENTS,
               identities: Sequence[Identity] = IDENTITIES, bindings: Sequence[Binding] = BINDINGS) -> None:
    """Store the fleet the way `bothub apply` does, before the hub starts."""
    workspace(data, "helper", "You are Helper. persona-helper\n")
    workspace(data, "coder", "You are Coder. persona-coder\n")
    store = SqliteStore(data / "bothub.sqlite3")
    await store.open()
    try:
        fleet = Fleet(store.fleet, env, lambda: ([Agent(name="default")], []))
        for agent in agents:
            await fleet.put_agent(agent, "test")
        for identity in identities:
            await fleet.put_identity(identity, "test")
        for binding in bindings:
            await fleet.put_binding(binding, "test")
    finally:
        await store.close()


def system_and_model(llm: FakeOpenAI) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for request in llm.requests:
        body: dict[str, Any] = request["body"]
        out.append((str(body["messages"][0]["content"]), str(body["model"])))
    return out
