"""The Anthropic Messages provider over real HTTP against FakeAnthropic (the real SSE events and checks):
streaming text, tool use round trips, signed thinking handed back, prompt-cache usage, errors, failover."""

from __future__ import annotations

from typing import Any

import pytest

from bot.agent.events import AgentEvent, ModelTurn, ReasoningDelta, RunFailed, RunFinished, StepMessage, TextDelta
from bot.agent.llm import LLMClient
from bot.agent.loop import AgentLoop
from bot.agent.tools import default_registry
from bot.agent.tools.registry import ToolContext
from bot.llmconfig import LinkConfig, LLMConfig, PriceConfig, ProviderConfig
from tests.fakes.anthropic_api import API_KEY, SIGNATURE, Answer, Failure, FakeAnthropic, Overloaded
from tests.fakes.openai_api import FakeOpenAI, Text

PROMPT: list[dict[str, Any]] = [{"role": "system", "content": "You are a test bot. " * 40},
                                {"role": "user", "content": "What is in my folder?"}]


def client(claude: FakeAnthropic, thinking: int | None = None, fallback: FakeOpenAI | None = None,
           temperature: float | None = None) -> LLMClient:
    providers = {"claude": ProviderConfig(kind="anthropic", base_url=claude.base_url, api_keys=[API_KEY],
                                          max_tokens=4096, thinking_tokens=thinking)}
    chain = [LinkConfig(provider="claude", model="claude-fake")]
    if fallback is not None:
        providers["local"] = ProviderConfig(base_url=fallback.base_url, api_keys=["test-key"])
        chain.append(LinkConfig(provider="local", model="fake-model"))
    prices = {"claude-fake": PriceConfig(input=3, cached_input=0.3, output=15)}
    return LLMClient(LLMConfig(providers=providers, chains={"default": chain}, max_retries=0, prices=prices,
                               temperature=temperature))


async def run(llm: LLMClient, ctx: ToolContext, show_thinking: bool = False) -> list[AgentEvent]:
    loop = AgentLoop(llm, default_registry(), "default", show_thinking=show_thinking)
    try:
        return [event async for event in loop.run(PROMPT, ctx)]
    finally:
        await llm.close()


def text(events: list[AgentEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_text_streams_and_the_cached_system_prompt_is_counted(claude: FakeAnthropic,
                                                                    ctx: ToolContext) -> None:
    claude.script(Answer("Nothing in there yet."), Answer("Still nothing."))
    first = await run(client(claude), ctx)
    second = await run(client(claude), ctx)
    assert text(first) == "Nothing in there yet." and first[-1] == RunFinished("Nothing in there yet.")
    request = claude.requests[0]
    assert request["headers"]["x-api-key"] == API_KEY and request["headers"]["anthropic-version"] == "2023-06-01"
    assert request["body"]["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert request["body"]["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "What is in my folder?", "cache_control": {"type": "ephemeral"}}]}]
    (turn_1,), (turn_2,) = ([e for e in events if isinstance(e, ModelTurn)] for events in (first, second))
    system_tokens = len(PROMPT[0]["content"]) // 4 + 1  # how the fake counts
    assert turn_2.prompt_tokens is not None and turn_2.prompt_tokens > system_tokens
    assert turn_1.cost is not None and turn_2.cost is not None
    assert turn_2.cost < turn_1.cost  # the second read the system prompt from the cache at a tenth of the price
    rest = turn_2.prompt_tokens - system_tokens
    assert turn_2.cost == pytest.approx((rest * 3 + system_tokens * 0.3 + 2 * 15) / 1e6)


async def test_tool_use_round_trips_into_tool_results(claude: FakeAnthropic, ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "notes.txt").write_text("alpha", encoding="utf-8")
    claude.script(Answer("Let me look.", tools=(("toolu_1", "read_file", {"filepath": "notes.txt"}),)),
                  Answer("It says alpha."))
    events = await run(client(claude), ctx)
    assert [s.role for s in events if isinstance(s, StepMessage)] == ["assistant", "tool", "assistant"]
    assert events[-1] == RunFinished("It says alpha.") and claude.refusals == []
    follow_up = claude.requests[1]["body"]["messages"]
    assert follow_up[1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"filepath": "notes.txt"}}]}
    assert follow_up[2]["content"][0]["type"] == "tool_result" and follow_up[2]["content"][0]["content"] == "alpha"
    tools = claude.requests[0]["body"]["tools"]
    assert {"name", "description", "input_schema"} <= tools[0].keys()


async def test_signed_thinking_is_handed_back_with_tool_use_and_kept_out_of_the_answer(
        claude: FakeAnthropic, ctx: ToolContext) -> None:
    claude.script(Answer(thinking="I should list the files.", tools=(("toolu_9", "list_files", {}),)),
                  Answer("The folder is empty.", thinking="Nothing listed."))
    events = await run(client(claude, thinking=2048), ctx, show_thinking=True)
    assert claude.refusals == []  # the API refuses a tool follow-up without its signed thinking
    handed_back = claude.requests[1]["body"]["messages"][1]["content"][0]
    assert handed_back == {"type": "thinking", "thinking": "I should list the files.", "signature": SIGNATURE}
    assert claude.requests[0]["body"]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert [e.reasoning for e in events if isinstance(e, ModelTurn)] == ["I should list the files.",
                                                                        "Nothing listed."]
    assert [s.content for s in events if isinstance(s, StepMessage)][-1] == "The folder is empty."
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "I should list the files.Nothing listed."
    assert events[-1] == RunFinished("The folder is empty.")  # the thinking is shown apart, folded


@pytest.mark.parametrize(("step", "kind"), [
    (Failure(529, "overloaded_error", "Overloaded"), "server"),
    (Failure(429, "rate_limit_error"), "rate_limit"),
    (Failure(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"), "context"),
    (Failure(401, "authentication_error"), "auth"),
    (Overloaded("Half"), "server"),
])
async def test_errors_have_their_kinds(claude: FakeAnthropic, ctx: ToolContext, step: Any, kind: str) -> None:
    claude.script(step)
    events = await run(client(claude), ctx)
    assert isinstance(events[-1], RunFailed) and events[-1].kind == kind


async def test_an_overloaded_claude_fails_over_to_an_openai_compatible_link(
        claude: FakeAnthropic, fake: FakeOpenAI, ctx: ToolContext) -> None:
    claude.script(Failure(529, "overloaded_error", "Overloaded"))
    fake.script(Text("answered locally"))
    events = await run(client(claude, fallback=fake), ctx)
    assert text(events) == "answered locally" and events[-1] == RunFinished("answered locally")
    assert [(e.model, e.failed) for e in events if isinstance(e, ModelTurn)] == [
        ("claude/claude-fake", "server"), ("local/fake-model", None)]


async def test_images_go_inline_and_garbled_tool_input_goes_back_as_an_empty_object(
        claude: FakeAnthropic, ctx: ToolContext) -> None:
    """A data: URL becomes a base64 image block (any other URL is left out: the API would fetch nothing for us);
    arguments the model once garbled go back as {} (the API takes only an object); a temperature is sent."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a test bot."},
        {"role": "user", "content": "Read it."},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "toolu_5", "type": "function",
                         "function": {"name": "read_file", "arguments": "{oops"}}]},
        {"role": "tool", "tool_call_id": "toolu_5", "content": "Error: bad arguments"},
        {"role": "user", "content": [{"type": "text", "text": "And this picture?"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                                     {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}},
                                     {"type": "text", "text": ""}]},
    ]
    claude.script(Answer("A picture of nothing."))
    llm = client(claude, temperature=0.3)
    try:
        events = [e async for e in AgentLoop(llm, default_registry(), "default").run(history, ctx)]
    finally:
        await llm.close()
    assert events[-1] == RunFinished("A picture of nothing.") and claude.refusals == []
    body = claude.requests[0]["body"]
    assert body["temperature"] == 0.3 and "thinking" not in body
    asked, latest = body["messages"][1:]  # the tool's result and the next words are one user turn
    assert asked["content"] == [{"type": "tool_use", "id": "toolu_5", "name": "read_file", "input": {}}]
    assert [(b["type"], b.get("text") or b.get("source") or b.get("content")) for b in latest["content"]] == [
        ("tool_result", "Error: bad arguments"), ("text", "And this picture?"),
        ("image", {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})]
