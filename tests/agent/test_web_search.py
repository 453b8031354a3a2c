"""web_search against fake SearXNG, Brave and Tavily servers on their own wire: results, errors, budgets, citing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from pydantic import ValidationError

from bot.agent.loop import AgentLoop
from bot.agent.tools import web_search
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.toolconfig import ToolsConfig
from tests.agent.conftest import MakeLLM
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.fakes.search_engines import KEY, FakeSearch, running

EXPECTED = """1. Python asyncio — docs — docs.example.org
   https://docs.example.org/asyncio.html
   asyncio is a library to write concurrent code using async/await.
2. Event loops explained — blog.example.net
   https://blog.example.net/loops
   How an event loop schedules callbacks."""


@pytest_asyncio.fixture
async def engines() -> AsyncIterator[FakeSearch]:
    async with running() as fake:
        yield fake


def registry(backend: str, engines: FakeSearch, per_minute: int = 10, env: dict[str, str] | None = None,
             url: str | None = None) -> ToolRegistry:
    tools = ToolRegistry()
    keys = {"BRAVE_API_KEY": KEY, "TAVILY_API_KEY": KEY} if env is None else env
    web_search.register(tools, backend, engines.url if url is None else url, 5, per_minute, keys)
    return tools


async def search(tools: ToolRegistry, ctx: ToolContext, query: str) -> str:
    return await tools.execute("web_search", json.dumps({"query": query}), ctx)


@pytest.mark.parametrize("backend", ["searxng", "brave", "tavily"])
async def test_each_engine_answers_with_clean_cited_results(backend: str, engines: FakeSearch,
                                                            ctx: ToolContext) -> None:
    found = await search(registry(backend, engines), ctx, "asyncio event loop")
    assert EXPECTED in found  # markup and entities gone, the domain named, the ftp result dropped
    assert found.startswith(web_search.UNTRUSTED_START) and "ftp://" not in found
    assert found.endswith("Cite the results you use as Markdown links, e.g. [title](url).")
    assert [(c.engine, c.query, c.status) for c in engines.calls] == [(backend, "asyncio event loop", 200)]


async def test_wrong_or_missing_keys_and_disabled_json_are_explained(engines: FakeSearch, ctx: ToolContext) -> None:
    wrong = {"BRAVE_API_KEY": "nope-nope", "TAVILY_API_KEY": "nope-nope"}
    assert await search(registry("brave", engines, env=wrong), ctx, "q") == \
        "Error: Brave Search refused the search with HTTP 401 (check its API key)."
    assert await search(registry("tavily", engines, env=wrong), ctx, "q") == \
        "Error: Tavily refused the search with HTTP 401 (check its API key)."
    calls = len(engines.calls)
    assert await search(registry("tavily", engines, env={}), ctx, "q") == \
        "Error: web search is not set up: TAVILY_API_KEY is missing; the operator can set it."
    assert len(engines.calls) == calls  # nothing sent without a key
    engines.searxng_json = False
    assert "is JSON output enabled in its settings.yml `search.formats`?" in \
        await search(registry("searxng", engines), ctx, "q")
    assert await search(registry("searxng", engines, url="http://127.0.0.1:9"), ctx, "q") == \
        "Error: could not reach SearXNG: ClientConnectorError."
    assert await search(registry("searxng", engines), ctx, "  ") == "Error: give the words to search for."


async def test_the_engines_rate_limit_is_a_polite_answer(engines: FakeSearch, ctx: ToolContext) -> None:
    tools = registry("brave", engines)
    assert EXPECTED in await search(tools, ctx, "first")
    assert await search(tools, ctx, "second") == \
        "Error: Brave Search is rate-limiting searches right now; try again in a minute."


async def test_each_chat_has_its_own_searches_per_minute(engines: FakeSearch, ctx: ToolContext) -> None:
    tools, other = registry("searxng", engines, per_minute=2), ToolContext(chat="test:2", workdir=ctx.workdir)
    for _ in range(2):
        assert EXPECTED in await search(tools, ctx, "q")
    refused = await search(tools, ctx, "q")
    assert refused.startswith("Error: this chat has used its 2 searches per minute; the next one in ")
    assert EXPECTED in await search(tools, other, "q")  # another chat is not held back
    assert len(engines.calls) == 3


def test_the_per_minute_window_slides_and_forgets_idle_chats(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    budget = web_search.PerMinute(1, clock=lambda: now[0])
    assert budget.wait("a") == 0 and budget.wait("a") == 60
    now[0] = 59.5
    assert budget.wait("a") == pytest.approx(0.5)
    now[0] = 60.0
    assert budget.wait("a") == 0
    monkeypatch.setattr(web_search, "_IDLE_CHATS", 3)
    for chat in "bcde":
        budget.wait(chat)
    now[0] = 200.0
    budget.wait("f")
    assert set(budget.recent) == {"f"}


async def test_the_agent_searches_reads_the_results_and_cites_them(fake: FakeOpenAI, make_llm: MakeLLM,
                                                                   engines: FakeSearch, ctx: ToolContext) -> None:
    fake.script(ToolCalls([("call_1", "web_search", '{"query": "asyncio"}')]),
                Text("See [Python asyncio — docs](https://docs.example.org/asyncio.html)."))
    loop = AgentLoop(await make_llm(), registry("searxng", engines), model="fake-model", max_turns=4)
    prompt = [{"role": "user", "content": "What is asyncio?"}]
    events = [e async for e in loop.run(prompt, ctx)]
    second = fake.requests[1]["body"]["messages"]
    tool_message = next(m for m in second if m["role"] == "tool")
    assert EXPECTED in tool_message["content"]
    assert any("https://docs.example.org/asyncio.html" in str(getattr(e, "text", "")) for e in events)


def test_searxng_needs_its_address() -> None:
    with pytest.raises(ValidationError, match="web_search_backend searxng needs web_search_url"):
        ToolsConfig(web_search_backend="searxng")
    assert ToolsConfig(web_search_backend="brave").web_search_url == ""
    with pytest.raises(ValidationError):
        ToolsConfig(web_search_backend="bing")
