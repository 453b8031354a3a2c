"""Anthropic stream events a scripted Answer does not make, against FakeAnthropic: a redacted thinking block handed
back untouched with the tool use it came with, text already in a block's start, an unknown delta kind skipped, usage
without output tokens; a broken event; and a request without a system prompt or tools."""

from __future__ import annotations

import json
from typing import Any

from bot.agent.events import FailureKind, ModelTurn, RunFailed, RunFinished
from bot.agent.loop import AgentLoop
from bot.agent.tools.registry import ToolContext, ToolRegistry
from tests.agent.test_anthropic import client, text
from tests.fakes.anthropic_api import Answer, Events, FakeAnthropic


def event(kind: str, **data: Any) -> str:
    return json.dumps({"type": kind, **data})


TOOL_TURN = Events((
    event("message_start", message={"usage": {"input_tokens": 11, "output_tokens": 1}}),
    event("content_block_start", index=0, content_block={"type": "redacted_thinking", "data": "b3BhcXVl"}),
    event("content_block_stop", index=0),
    event("content_block_start", index=1, content_block={"type": "text", "text": "Let me "}),
    event("content_block_delta", index=1, delta={"type": "text_delta", "text": "look."}),
    event("content_block_delta", index=1, delta={"type": "citations_delta", "citation": {"cited_text": "x"}}),
    event("content_block_start", index=2, content_block={"type": "tool_use", "id": "toolu_1", "name": "peek"}),
    event("content_block_delta", index=2, delta={"type": "input_json_delta", "partial_json": '{"at": 1}'}),
    event("message_delta", delta={"stop_reason": "tool_use"}, usage={}),
    event("message_stop"),
))


async def test_a_redacted_thinking_block_goes_back_untouched_with_its_tool_use(
        claude: FakeAnthropic, ctx: ToolContext) -> None:
    claude.script(TOOL_TURN, Answer("Seen."))
    llm, tools = client(claude), ToolRegistry()

    async def peek(_ctx: ToolContext, at: int) -> str:
        return f"line {at}"

    tools.register("peek", "looks at a line", {"type": "object", "properties": {"at": {"type": "integer"}}}, peek)
    try:
        events = [e async for e in AgentLoop(llm, tools, "default").run(
            [{"role": "user", "content": "Look."}], ctx)]
    finally:
        await llm.close()
    assert claude.refusals == [] and events[-1] == RunFinished("Seen.") and text(events) == "Let me look.Seen."
    first = next(e for e in events if isinstance(e, ModelTurn))
    assert (first.prompt_tokens, first.completion_tokens) == (11, 1)  # a delta without output_tokens changes none
    request, follow_up = (r["body"] for r in claude.requests)
    assert "system" not in request and "cache_control" not in json.dumps(follow_up.get("system", []))
    assert request["tools"][0]["name"] == "peek"
    assert follow_up["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": "b3BhcXVl"}, {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "peek", "input": {"at": 1}}]
    assert follow_up["messages"][2]["content"][0]["content"] == "line 1"


async def test_a_broken_event_fails_the_run_and_no_tools_are_sent(claude: FakeAnthropic, ctx: ToolContext) -> None:
    claude.script(Events((event("message_start", message={}), "{not json")))
    llm = client(claude)
    try:
        events = [e async for e in AgentLoop(llm, ToolRegistry(), "default").run(
            [{"role": "user", "content": "Hi."}], ctx)]
    finally:
        await llm.close()
    assert isinstance(events[-1], RunFailed) and events[-1].kind == FailureKind.OTHER
    assert "malformed event from the provider" in events[-1].detail
    assert "tools" not in claude.requests[0]["body"]
