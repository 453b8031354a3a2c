"""The Gemini provider over real HTTP against FakeGemini (its SSE chunks and checks): streaming text, function
calls answered by name, thought summaries kept out of the answer, usage, errors and failover."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from bot.agent.events import AgentEvent, ModelTurn, RunFailed, RunFinished, StepMessage, TextDelta
from bot.agent.llm import LLMClient
from bot.agent.loop import AgentLoop
from bot.agent.tools import default_registry
from bot.agent.tools.registry import ToolContext
from bot.llmconfig import LinkConfig, LLMConfig, ProviderConfig
from tests.fakes.gemini_api import API_KEY, FakeGemini, Refuse, Reply
from tests.fakes.openai_api import FakeOpenAI, Text

PROMPT: list[dict[str, Any]] = [{"role": "system", "content": "You are a test bot."},
                                {"role": "user", "content": "What is in my notes?"}]


@pytest_asyncio.fixture
async def gemini() -> AsyncIterator[FakeGemini]:
    fake = FakeGemini()
    await fake.start()
    yield fake
    await fake.stop()


async def run(gemini: FakeGemini, ctx: ToolContext, key: str = API_KEY, fallback: FakeOpenAI | None = None,
              thinking: int | None = None, messages: list[dict[str, Any]] = PROMPT,
              temperature: float | None = None) -> list[AgentEvent]:
    providers = {"g": ProviderConfig(kind="gemini", base_url=gemini.base_url, api_keys=[key],
                                     thinking_tokens=thinking)}
    chain = [LinkConfig(provider="g", model="gemini-fake")]
    if fallback is not None:
        providers["local"] = ProviderConfig(base_url=fallback.base_url, api_keys=["test-key"])
        chain.append(LinkConfig(provider="local", model="fake-model"))
    llm = LLMClient(LLMConfig(providers=providers, chains={"default": chain}, max_retries=0, temperature=temperature))
    try:
        return [e async for e in AgentLoop(llm, default_registry(), "default").run(messages, ctx)]
    finally:
        await llm.close()


async def test_text_streams_with_the_system_instruction_and_usage(gemini: FakeGemini, ctx: ToolContext) -> None:
    gemini.script(Reply("Nothing yet."))
    events = await run(gemini, ctx)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Nothing yet."
    request = gemini.requests[0]
    assert (request["model"], request["query"], request["headers"]["x-goog-api-key"]) == (
        "gemini-fake", {"alt": "sse"}, API_KEY)
    assert request["body"]["systemInstruction"] == {"parts": [{"text": "You are a test bot."}]}
    assert request["body"]["contents"] == [{"role": "user", "parts": [{"text": "What is in my notes?"}]}]
    (turn,) = [e for e in events if isinstance(e, ModelTurn)]
    assert turn.prompt_tokens == len(json.dumps(request["body"])) // 4 + 1
    assert turn.completion_tokens == 2


async def test_function_calls_are_answered_by_name_and_thoughts_stay_out(gemini: FakeGemini,
                                                                         ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "notes.txt").write_text("alpha", encoding="utf-8")
    gemini.script(Reply(thought="Read the notes.", calls=(("read_file", {"filepath": "notes.txt"}),)),
                  Reply("They say alpha."))
    events = await run(gemini, ctx, thinking=2048)
    assert gemini.refusals == [] and events[-1] == RunFinished("They say alpha.")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "They say alpha."
    assert [e.reasoning for e in events if isinstance(e, ModelTurn)] == ["Read the notes.", ""]
    follow_up = gemini.requests[1]["body"]["contents"]
    assert follow_up[1] == {"role": "model", "parts": [{"functionCall": {"name": "read_file",
                                                                          "args": {"filepath": "notes.txt"}}}]}
    assert follow_up[2] == {"role": "user", "parts": [{"functionResponse": {"name": "read_file",
                                                                             "response": {"result": "alpha"}}}]}
    assert [s.role for s in events if isinstance(s, StepMessage)] == ["assistant", "tool", "assistant"]
    assert gemini.requests[0]["body"]["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 2048,
                                                                                "includeThoughts": True}


@pytest.mark.parametrize(("step", "kind"), [
    (Refuse(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted"), "rate_limit"),
    (Refuse(503, "UNAVAILABLE", "The model is overloaded."), "server"),
    (Refuse(400, "INVALID_ARGUMENT", "The input token count (2000000) exceeds the maximum number of tokens "
                                     "allowed (1048576)."), "context"),
])
async def test_errors_have_their_kinds(gemini: FakeGemini, ctx: ToolContext, step: Refuse, kind: str) -> None:
    gemini.script(step)
    events = await run(gemini, ctx)
    assert isinstance(events[-1], RunFailed) and events[-1].kind == kind


async def test_a_bad_key_is_an_auth_failure_that_fails_over(gemini: FakeGemini, fake: FakeOpenAI,
                                                            ctx: ToolContext) -> None:
    fake.script(Text("answered locally"))
    events = await run(gemini, ctx, key="wrong", fallback=fake)
    assert [(e.model, e.failed) for e in events if isinstance(e, ModelTurn)] == [
        ("g/gemini-fake", "auth"), ("local/fake-model", None)]
    assert events[-1] == RunFinished("answered locally")


async def test_images_go_inline_and_garbled_call_arguments_go_back_as_an_empty_object(
        gemini: FakeGemini, ctx: ToolContext) -> None:
    """A data: URL is inlineData (any other URL is left out); arguments the model once garbled go back as {};
    the temperature is in the generation config."""
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Read it."},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{oops"}},
                        {"id": "c2", "type": "function", "function": {"name": "list_files", "arguments": "[1]"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Error: bad arguments"},
        {"role": "tool", "tool_call_id": "c2", "content": "(empty)"},
        {"role": "user", "content": [{"type": "text", "text": "And this picture?"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                                     {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}}]},
    ]
    gemini.script(Reply("A picture of nothing."))
    events = await run(gemini, ctx, messages=history, temperature=0.4)
    assert events[-1] == RunFinished("A picture of nothing.")
    body = gemini.requests[0]["body"]
    assert body["generationConfig"]["temperature"] == 0.4 and "systemInstruction" not in body
    _, called, latest = body["contents"]
    assert called == {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {}}},
                                                 {"functionCall": {"name": "list_files", "args": {}}}]}
    assert latest["parts"] == [
        {"functionResponse": {"name": "read_file", "response": {"result": "Error: bad arguments"}}},
        {"functionResponse": {"name": "list_files", "response": {"result": "(empty)"}}},
        {"text": "And this picture?"}, {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]
