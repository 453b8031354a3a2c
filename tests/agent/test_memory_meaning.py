"""Recall by meaning: memories embedded through the provider's /embeddings (the fake's vectors put "beverage"
near "tea"), ranked in the store on both backends, never another chat's; keywords when there is no model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.agent.llm import LLMClient
from bot.agent.memory import Memory, register
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.store import Store
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.postgres import PostgresServer

A, B = "test:a", "test:b"


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    url = ""
    if request.param == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres")
        url = await server.new_database()
    s: Store = PostgresStore(url) if url else SqliteStore(tmp_path / "bothub.db")
    await s.open()
    yield s
    await s.close()


@pytest.fixture
async def tools(store: Store, fake: FakeOpenAI) -> AsyncIterator[ToolRegistry]:
    from bot.llmconfig import LLMConfig
    llm = LLMClient(LLMConfig(base_url=fake.base_url, api_key="test-key", max_retries=0))
    registry = ToolRegistry()
    register(registry, Memory(store.memories, embed=llm.embedder("fake-embed")))
    yield registry
    await llm.close()


async def call(tools: ToolRegistry, chat: str, name: str, **arguments: object) -> str:
    return await tools.execute(name, json.dumps(arguments), ToolContext(chat=chat, workdir=Path("/nonexistent")))


async def test_the_right_memory_is_found_by_meaning_never_another_chats(tools: ToolRegistry, fake: FakeOpenAI) -> None:
    for content in ("likes green tea in the morning", "deploys the billing service on fridays",
                    "has a puppy called Rex"):
        await call(tools, A, "remember", content=content)
    await call(tools, B, "remember", content="drinks espresso all day", type="pref")
    assert await call(tools, A, "recall", query="favourite beverage") == "[fact] likes green tea in the morning"
    assert await call(tools, A, "recall", query="dog") == "[fact] has a puppy called Rex"
    assert (await call(tools, A, "recall", query="when is the invoice release")).startswith(
        "[fact] deploys the billing service")
    assert await call(tools, B, "recall", query="beverage") == "[pref] drinks espresso all day"
    assert await call(tools, B, "recall", query="dog") == "Nothing remembered about 'dog'"
    assert len(fake.embeddings.requests) == 9 and {r["model"] for r in fake.embeddings.requests} == {"fake-embed"}


async def test_keywords_when_the_provider_fails_or_memories_predate_the_model(store: Store,
                                                                               fake: FakeOpenAI) -> None:
    registry = ToolRegistry()
    register(registry, Memory(store.memories))  # no embedding model: stored without vectors
    await call(registry, A, "remember", content="likes green tea")
    from bot.llmconfig import LLMConfig
    llm = LLMClient(LLMConfig(base_url=fake.base_url, api_key="test-key", max_retries=0))
    try:
        embedded = ToolRegistry()
        register(embedded, Memory(store.memories, embed=llm.embedder("fake-embed")))
        assert await call(embedded, A, "recall", query="green") == "[fact] likes green tea"  # nothing embedded yet
        fake.embeddings.fail_with = 500
        assert await call(embedded, A, "remember", content="ships on fridays") == "Remembered #2"
        assert await call(embedded, A, "recall", query="fridays") == "[fact] ships on fridays"
        assert await call(embedded, A, "recall", query="beverage") == "Nothing remembered about 'beverage'"
    finally:
        await llm.close()


async def test_recall_by_meaning_through_the_hub(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,),
                           config={"llm": {"embedding_model": "fake-embed"}}):
        fake.script(ToolCalls([("c1", "remember", '{"content":"allergic to peanuts"}')]), Text("noted"),
                    ToolCalls([("c2", "recall", '{"query":"any allergy I have?"}')]), Text("you are allergic"))
        await rec.say("I can't eat peanuts", chat_id="a")
        await wait_for(lambda: rec.texts("a") == ["noted"])
        await rec.say("what should I avoid?", chat_id="a")
        await wait_for(lambda: rec.texts("a") == ["noted", "you are allergic"])
        tool_answer = fake.requests[-1]["body"]["messages"][-1]
        assert tool_answer == {"role": "tool", "tool_call_id": "c2", "content": "[fact] allergic to peanuts"}
