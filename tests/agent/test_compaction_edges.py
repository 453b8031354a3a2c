"""Compaction's edges, on the real SQLite store and an LLMClient against FakeOpenAI: a summarizer that fails or
answers nothing leaves the branch whole (the prompt is trimmed instead) and stores nothing; a branch with nothing
older than its one turn is never summarized; the per-conversation cache keeps at most its size."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.agent.compaction import Compactor
from bot.agent.provider import LLMError
from bot.agent.tokens import TokenCounter
from bot.store.sqlite import SqliteStore
from bot.tree.model import Message
from tests.agent.conftest import MakeLLM
from tests.fakes.openai_api import Error, FakeOpenAI, Text

CHAT = "recording:c1"
WORDS = "the garden, the weather, the budget and the plans for next week " * 20


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "bothub.sqlite3")
    await opened.open()
    yield opened
    await opened.close()


async def branch(store: SqliteStore, roles: str) -> tuple[str, list[Message]]:
    """A conversation whose path has one message per letter: u(ser) or a(ssistant), each long."""
    info = await store.conversations.create(CHAT)
    path, parent = [], info.root_id
    for i, role in enumerate(roles):
        message = Message.new("user" if role == "u" else "assistant", f"{i} {WORDS}")
        message.parent_id, parent = parent, message.id
        path.append(message)
    await store.conversations.append(CHAT, info.id, path)
    return info.id, path


async def test_a_failing_or_empty_summarizer_leaves_the_branch_whole(
        store: SqliteStore, fake: FakeOpenAI, make_llm: MakeLLM, caplog: pytest.LogCaptureFixture) -> None:
    compactor = Compactor(await make_llm(), store.summaries, "cheap-model")
    conv_id, path = await branch(store, "uauaua")
    fake.script(Error(500), Text("   "))
    for _ in range(2):
        view = await compactor.fit(CHAT, conv_id, path, budget=200, counter=TokenCounter())
        assert view.summary is None and view.recent == path
    assert len(fake.requests) == 2 and await store.summaries.of_conversation(CHAT, conv_id) == {}
    assert sum("the oldest turns are trimmed instead" in r.getMessage() for r in caplog.records) == 2
    fake.script(Text(""))
    with pytest.raises(LLMError, match="the summarizer returned nothing"):
        await compactor.compact(CHAT, conv_id, path)


@pytest.mark.parametrize("roles", ["u", "ua"], ids=["one-message", "one-turn"])
async def test_a_branch_of_one_turn_over_budget_has_nothing_older_to_summarize(
        store: SqliteStore, fake: FakeOpenAI, make_llm: MakeLLM, roles: str) -> None:
    compactor = Compactor(await make_llm(), store.summaries, "cheap-model")
    conv_id, path = await branch(store, roles)
    view = await compactor.fit(CHAT, conv_id, path, budget=10, counter=TokenCounter())
    assert view.summary is None and view.recent == path and fake.requests == []


async def test_the_summary_cache_keeps_at_most_its_size(store: SqliteStore, make_llm: MakeLLM) -> None:
    compactor = Compactor(await make_llm(), store.summaries, "cheap-model", cached_conversations=1)
    (first, first_path), (second, second_path) = await branch(store, "ua"), await branch(store, "ua")
    assert await compactor.summaries(CHAT, first) == {}
    assert await compactor.summaries(CHAT, second) == {}  # kept; the first one is pushed out
    for conv_id, path in ((first, first_path), (second, second_path)):  # another replica summarizes both
        await store.summaries.put(CHAT, conv_id, path[0].id, "elsewhere", 1)
    assert await compactor.summaries(CHAT, second) == {}  # still kept: not read again
    assert list(await compactor.summaries(CHAT, first)) == [first_path[0].id]  # pushed out: read afresh
