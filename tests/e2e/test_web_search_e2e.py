"""web_search in the running app: offered only when configured, a chat's question answered from real results
the key read from the environment, and doctor's live check."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.agent.workspace import init_workspace
from bot.cli import doctor
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.fakes.search_engines import KEY, FakeSearch, running
from tests.harness import RecordingAdapter, make_config, running_app, wait_for


@pytest_asyncio.fixture
async def engines() -> AsyncIterator[FakeSearch]:
    async with running() as fake:
        yield fake


def tool_names(fake: FakeOpenAI) -> set[str]:
    return {t["function"]["name"] for t in fake.requests[-1]["body"].get("tools", [])}


async def test_a_chat_question_is_answered_from_search_results(tmp_path: Path, fake: FakeOpenAI,
                                                               engines: FakeSearch) -> None:
    rec = RecordingAdapter()
    config = {"tools": {"web_search_backend": "tavily", "web_search_url": engines.url}}
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config,
                           env={"TAVILY_API_KEY": KEY}) as app:
        fake.script(ToolCalls([("s1", "web_search", '{"query": "asyncio docs"}')]),
                    Text("Read [the asyncio docs](https://docs.example.org/asyncio.html)."))
        await rec.say("where are the asyncio docs?")
        await wait_for(lambda: rec.texts()[-1:] == ["Read [the asyncio docs](https://docs.example.org/asyncio.html)."])
        await app.hub.idle()
        assert "web_search" in tool_names(fake)
        result = next(m for m in fake.requests[1]["body"]["messages"] if m["role"] == "tool")["content"]
        assert "1. Python asyncio — docs — docs.example.org" in result
        assert [(c.engine, c.query, c.status) for c in engines.calls] == [("tavily", "asyncio docs", 200)]


async def test_not_offered_unless_configured(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)):
        fake.script(Text("hi"))
        await rec.say("hello")
        await wait_for(lambda: rec.texts()[-1:] == ["hi"])
        assert "web_search" not in tool_names(fake) and "web_fetch" in tool_names(fake)


@pytest.mark.parametrize(("env", "line"), [
    ({"BRAVE_API_KEY": KEY}, "✔ web_search: Brave Search at {url} answers"),
    ({"BRAVE_API_KEY": "wrong-key"}, "✘ web_search: Brave Search refused the search with HTTP 401 (check its API key)"),
    ({}, "✘ web_search: Brave Search: BRAVE_API_KEY is not set"),
])
async def test_doctor_runs_one_real_search(tmp_path: Path, fake: FakeOpenAI, engines: FakeSearch,
                                           capsys: pytest.CaptureFixture[str], env: dict[str, str],
                                           line: str) -> None:
    cfg, full_env = make_config(tmp_path, fake.base_url, env=env,
                                config={"tools": {"web_search_backend": "brave", "web_search_url": engines.url}})
    init_workspace(cfg.workspace_dir)
    await doctor.run(cfg, full_env)
    assert line.format(url=engines.url) in capsys.readouterr().out.splitlines()
