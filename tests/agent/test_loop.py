"""AgentLoop + LLMClient over HTTP against FakeOpenAI (the real wire protocol): tool chains, limits, failures."""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

import pytest

from bot.agent.events import (
    AgentEvent,
    ModelTurn,
    RunFailed,
    RunFinished,
    StepMessage,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from bot.agent.llm import LLMClient
from bot.agent.loop import AgentLoop
from bot.agent.modelapi import Completion
from bot.agent.tools import default_registry
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.llmconfig import LLMConfig
from tests.agent.conftest import MakeLLM
from tests.fakes.openai_api import Error, FakeOpenAI, Hang, StreamError, Text, ToolCalls

PROMPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a test bot."},
    {"role": "user", "content": "What is in my notes?"},
]


async def run(llm: LLMClient, ctx: ToolContext, tools: ToolRegistry | None = None,
              max_turns: int = 30) -> list[AgentEvent]:
    """The run's events without its ModelTurn timings (test_model_turns_report_usage_and_timing has those)."""
    return [e for e in await run_all(llm, ctx, tools, max_turns) if not isinstance(e, ModelTurn)]


async def run_all(llm: LLMClient, ctx: ToolContext, tools: ToolRegistry | None = None,
                  max_turns: int = 30) -> list[AgentEvent]:
    loop = AgentLoop(llm, tools or default_registry(), model="fake-model", max_turns=max_turns)
    return [event async for event in loop.run(PROMPT, ctx)]


def steps(events: list[AgentEvent]) -> list[StepMessage]:
    return [e for e in events if isinstance(e, StepMessage)]


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


async def test_tool_chain_list_then_read_then_answer(fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    fake.script(
        ToolCalls([("call_1", "list_files", "{}")]),
        ToolCalls([("call_2", "read_file", '{"filepath": "notes.txt"}')], text="Let me read it."),
        Text("Your notes say alpha and beta."),
    )
    prompt_before = [dict(m) for m in PROMPT]
    events = await run(await make_llm(), ctx)

    assert steps(events) == [
        StepMessage("assistant", "", tool_calls=[call("call_1", "list_files", "{}")]),
        StepMessage("tool", "notes.txt (11 B)", tool_call_id="call_1"),
        StepMessage("assistant", "Let me read it.",
                    tool_calls=[call("call_2", "read_file", '{"filepath": "notes.txt"}')]),
        StepMessage("tool", "alpha\nbeta", tool_call_id="call_2"),
        StepMessage("assistant", "Your notes say alpha and beta."),
    ]
    assert events[-1] == RunFinished("Your notes say alpha and beta.")
    assert [e for e in events if isinstance(e, ToolStarted | ToolFinished)] == [
        ToolStarted("list_files", "{}"), ToolFinished("list_files", "notes.txt (11 B)"),
        ToolStarted("read_file", '{"filepath": "notes.txt"}'), ToolFinished("read_file", "alpha\nbeta"),
    ]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == (
        "Let me read it.Your notes say alpha and beta.")

    bodies = [r["body"] for r in fake.requests]
    assert len(bodies) == 3
    assert bodies[0]["messages"] == PROMPT
    assert {t["function"]["name"] for t in bodies[0]["tools"]} == {
        "read_file", "write_file", "list_files", "file_search", "read_document", "send_file"}
    assert bodies[0]["stream"] is True and bodies[0]["stream_options"] == {"include_usage": True}
    assert bodies[1]["messages"][2:] == [
        {"role": "assistant", "content": None, "tool_calls": [call("call_1", "list_files", "{}")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "notes.txt (11 B)"},
    ]
    assert bodies[2]["messages"][-2:] == [
        {"role": "assistant", "content": "Let me read it.",
         "tool_calls": [call("call_2", "read_file", '{"filepath": "notes.txt"}')]},
        {"role": "tool", "tool_call_id": "call_2", "content": "alpha\nbeta"},
    ]
    assert prompt_before == PROMPT  # the caller's list is not modified


async def test_parallel_tool_calls_in_one_turn(fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext) -> None:
    args_a = '{"filepath": "a.txt", "content": "first file"}'
    args_b = '{"filepath": "sub/dir/b.txt", "content": "second file"}'
    fake.script(ToolCalls([("call_a", "write_file", args_a), ("call_b", "write_file", args_b)],
                          fragment=3, interleave=True),
                Text("Both written."))
    events = await run(await make_llm(), ctx)

    assert steps(events)[0].tool_calls == [call("call_a", "write_file", args_a), call("call_b", "write_file", args_b)]
    assert [s.tool_call_id for s in steps(events)[1:3]] == ["call_a", "call_b"]
    assert (ctx.workdir / "a.txt").read_text(encoding="utf-8") == "first file"
    assert (ctx.workdir / "sub/dir/b.txt").read_text(encoding="utf-8") == "second file"
    tool_messages = fake.requests[1]["body"]["messages"][-2:]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_a", "call_b"]
    assert events[-1] == RunFinished("Both written.")


async def test_bad_json_arguments_are_told_to_the_model(
    fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext
) -> None:
    fake.script(ToolCalls([("call_1", "read_file", '{"filepath": "a.txt"')]), Text("Sorry, retrying."))
    events = await run(await make_llm(), ctx)

    tool_result = steps(events)[1]
    assert tool_result.tool_call_id == "call_1"
    assert tool_result.content.startswith("Error: arguments for read_file are not valid JSON")
    assert fake.requests[1]["body"]["messages"][-1] == {
        "role": "tool", "tool_call_id": "call_1", "content": tool_result.content}
    assert events[-1] == RunFinished("Sorry, retrying.")


async def test_turn_limit_stops_after_exactly_max_turns(
    fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext
) -> None:
    fake.script(*[ToolCalls([(f"call_{n}", "list_files", "{}")]) for n in range(31)])
    events = await run(await make_llm(), ctx, max_turns=30)

    assert len(fake.requests) == 30
    assert fake.pending == 1
    assert len(steps(events)) == 60  # every assistant call and tool result is there to store
    failure = events[-1]
    assert isinstance(failure, RunFailed) and failure.kind == "turns"


@pytest.mark.parametrize(("step", "kind"), [
    (Error(429, code="rate_limit_exceeded"), "rate_limit"),
    (Error(500), "server"),
    (Error(503), "server"),
    (Error(400, code="context_length_exceeded", message="maximum context length is 8192 tokens"), "context"),
    (Error(403, message="not allowed"), "auth"),
    (Error(404, code="model_not_found"), "other"),
    (Hang(3.0), "timeout"),
])
async def test_llm_failures_end_the_run_with_their_kind(
    fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext, caplog: pytest.LogCaptureFixture,
    step: Any, kind: str,
) -> None:
    fake.script(step)
    with caplog.at_level(logging.WARNING, logger="bothub.agent"):
        events = await run(await make_llm(read_timeout=0.3, max_retries=0), ctx)

    assert len(events) == 1
    failure = events[0]
    assert isinstance(failure, RunFailed) and failure.kind == kind
    assert re.fullmatch(r"[0-9a-f]{8}", failure.error_id)
    assert failure.error_id in caplog.text
    assert len(fake.requests) == 1


async def test_auth_failure_never_logs_the_key(
    fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-test-PLACEHOLDER0123456789"
    fake.api_key = key  # accepted by the key check, then a provider that echoes the whole key in its 401
    fake.script(Error(401, code="invalid_api_key", message=f"Incorrect API key provided: {key}"))
    with caplog.at_level(logging.DEBUG):
        events = await run(await make_llm(api_key=key), ctx)

    failure = events[-1]
    assert isinstance(failure, RunFailed) and failure.kind == "auth"
    assert key not in failure.detail and key not in caplog.text
    assert fake.requests[0]["headers"]["Authorization"] == f"Bearer {key}"


async def test_429_and_5xx_are_retried_before_the_stream_starts_after_the_wait_asked(
    fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext
) -> None:
    fake.script(Error(429, code="rate_limit_exceeded", retry_after=0.4), Error(503, retry_after=0.01), Text("ok"))
    started = time.monotonic()
    events = await run(await make_llm(max_retries=2), ctx)

    assert events[-1] == RunFinished("ok")
    assert len(fake.requests) == 3 and fake.pending == 0
    assert time.monotonic() - started >= 0.4  # the 429's Retry-After was honoured


async def test_a_wait_longer_than_a_minute_is_not_retried(
    fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext
) -> None:
    fake.script(Error(429, code="insufficient_quota", retry_after=3600), Text("never asked"))
    events = await run(await make_llm(max_retries=2), ctx)

    failure = events[-1]
    assert isinstance(failure, RunFailed) and failure.kind == "rate_limit"
    assert len(fake.requests) == 1 and fake.pending == 1


async def test_a_tool_call_arriving_whole_in_one_large_event_is_read(
    fake: FakeOpenAI, make_llm: MakeLLM
) -> None:
    arguments = json.dumps({"path": "big.txt", "content": "x" * 300_000})  # one SSE line > 128 KiB
    fake.script(ToolCalls([("c1", "write_file", arguments)], fragment=len(arguments)))
    llm = await make_llm()
    items = [item async for item in llm.stream([{"role": "user", "content": "write"}], None, "fake-model")]

    completion = items[-1]
    assert isinstance(completion, Completion)
    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == [("c1", "write_file", arguments)]


async def test_in_stream_error_after_partial_text_is_not_retried(
    fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext
) -> None:
    fake.script(StreamError(text="partial answer"))
    events = await run(await make_llm(max_retries=2), ctx)

    assert [e.text for e in events if isinstance(e, TextDelta)] == ["partial ", "answer"]
    failure = events[-1]
    assert isinstance(failure, RunFailed) and failure.kind == "server"
    assert len(fake.requests) == 1


async def test_stall_mid_stream_times_out_without_retry(
    fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext
) -> None:
    fake.script(Text("one two three", delay=2.0))
    events = await run(await make_llm(read_timeout=0.3, max_retries=2), ctx)

    assert events[0] == TextDelta("one ")
    failure = events[-1]
    assert isinstance(failure, RunFailed) and failure.kind == "timeout"
    assert len(fake.requests) == 1


async def test_unreachable_server_is_a_connection_failure(ctx: ToolContext) -> None:
    closed = FakeOpenAI()
    await closed.start()
    base_url = closed.base_url
    await closed.stop()  # nothing listens on this port any more
    llm = LLMClient(LLMConfig(base_url=base_url, timeout=2.0, max_retries=0))
    try:
        events = await run(llm, ctx)
    finally:
        await llm.close()
    failure = events[-1]
    assert isinstance(failure, RunFailed) and failure.kind == "connection"


async def test_no_key_with_base_url_uses_a_placeholder_and_records_usage(
    fake: FakeOpenAI, make_llm: MakeLLM
) -> None:
    fake.api_key = None  # a local server (vLLM, Ollama) that ignores the key
    llm = await make_llm(api_key=None)
    fake.script(Text("hello there"))
    items = [item async for item in llm.stream([{"role": "user", "content": "hi"}], None, "fake-model")]

    completion = items[-1]
    assert isinstance(completion, Completion)
    assert completion.text == "hello there" and completion.finish_reason == "stop"
    assert completion.usage is not None and completion.usage.completion_tokens == 2
    assert llm.total_usage == completion.usage
    assert fake.requests[0]["headers"]["Authorization"] == "Bearer not-needed"
    assert "tools" not in fake.requests[0]["body"]  # the API rejects an empty tools list


async def test_empty_answer_finishes_with_empty_text(fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext) -> None:
    fake.script(Text(""))
    events = await run(await make_llm(), ctx, tools=ToolRegistry())
    assert events == [StepMessage("assistant", ""), RunFinished("")]


async def test_provider_usage_is_reported_with_the_answer(make_llm: MakeLLM, ctx: ToolContext) -> None:
    events = await run(await make_llm(), ctx)
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.prompt_tokens and finished.prompt_tokens > 0


async def test_model_turns_report_usage_and_timing(fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    fake.script(ToolCalls([("call_1", "list_files", "{}")]), Text("Nothing here.", first_token_delay=0.05))
    events = await run_all(await make_llm(max_retries=0), ctx)
    turns = [e for e in events if isinstance(e, ModelTurn)]
    requests = [r["body"] for r in fake.requests]
    assert [(t.model, t.tool_calls, t.failed) for t in turns] == [("fake-model", 1, None), ("fake-model", 0, None)]
    # the fake's usage: a quarter of the prompt's characters plus one, and one token per streamed piece
    expected = [sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4 + 1 for body in requests]
    assert [t.prompt_tokens for t in turns] == expected
    assert [t.completion_tokens for t in turns] == [0, 2]
    first_token = turns[1].first_token
    assert first_token is not None and 0.05 <= first_token <= turns[1].seconds
    assert turns[0].first_token is not None  # a tool call counts as the first token
    assert events.index(turns[0]) < events.index(next(e for e in events if isinstance(e, StepMessage)))

    fake.script(Error(429))
    failed = await run_all(await make_llm(max_retries=0), ctx)
    assert [(type(e), getattr(e, "failed", None)) for e in failed] == [(ModelTurn, "rate_limit"), (RunFailed, None)]


async def test_the_request_carries_the_tools_registered_at_that_moment(
    fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext
) -> None:
    """The tool list's JSON is made once and reused: a tool added or removed in between must still show."""
    llm = await make_llm()
    tools = ToolRegistry()

    async def echo(_ctx: ToolContext, text: str = "") -> str:
        return text

    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    fake.script(Text("none"), Text("one"), Text("one again"), Text("two"), Text("none again"))
    await run(llm, ctx, tools)
    tools.register("echo", "Says it back", schema, echo)
    await run(llm, ctx, tools)
    await run(llm, ctx, tools)
    tools.register("shout", "Says it louder", schema, echo)
    await run(llm, ctx, tools)
    tools.remove("echo")
    tools.remove("shout")
    await run(llm, ctx, tools)
    sent = [[t["function"]["name"] for t in r["body"].get("tools", [])] for r in fake.requests]
    assert sent == [[], ["echo"], ["echo"], ["echo", "shout"], []]
    assert "tools" not in fake.requests[0]["body"] and "tools" not in fake.requests[4]["body"]  # never an empty list
    assert fake.requests[1]["body"]["tools"][0] == {"type": "function", "function": {
        "name": "echo", "description": "Says it back", "parameters": schema}}
    assert fake.requests[1]["body"]["stream"] is True and fake.requests[1]["body"]["messages"] == PROMPT
