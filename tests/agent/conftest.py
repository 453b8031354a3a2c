"""Agent fixtures: a scripted FakeOpenAI, real LLMClients pointed at it, a FakeAnthropic, MCP servers stopped
after each test, and a chat folder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from bot.agent.llm import LLMClient
from bot.agent.tools.mcp import McpTools
from bot.agent.tools.registry import ToolContext
from bot.llmconfig import LLMConfig
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.openai_api import API_KEY, FakeOpenAI

MakeLLM = Callable[..., Awaitable[LLMClient]]


@pytest_asyncio.fixture
async def make_llm(fake: FakeOpenAI) -> AsyncIterator[MakeLLM]:
    """LLMClient factory; fast by default (no SDK retries), override timeout/max_retries per test."""
    clients: list[LLMClient] = []

    async def make(read_timeout: float = 10.0, max_retries: int = 0, api_key: str | None = API_KEY) -> LLMClient:
        cfg = LLMConfig(base_url=fake.base_url, api_key=api_key, timeout=read_timeout, max_retries=max_retries)
        clients.append(LLMClient(cfg))
        return clients[-1]

    yield make
    for client in clients:
        await client.close()


@pytest_asyncio.fixture
async def claude() -> AsyncIterator[FakeAnthropic]:
    fake = FakeAnthropic()
    await fake.start()
    yield fake
    await fake.stop()


@pytest_asyncio.fixture
async def started() -> AsyncIterator[list[McpTools]]:
    """McpTools made by a test are stopped after it, so no server process outlives the test."""
    made: list[McpTools] = []
    yield made
    for mcp in made:
        await mcp.stop()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(chat="test:1", workdir=tmp_path / "chat")
