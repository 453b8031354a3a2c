"""MCP tools against a small real MCP server (tests/fakes/mcp_server.py) over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.agent.approvals import Approvals, Scope
from bot.agent.tools.mcp import McpTools, connection
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.replies import Reply
from bot.toolconfig import McpServerConfig

SERVER = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")
TOKEN = "test-token-3f9a"


def stdio(mode: str = "stdio", **extra: Any) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[SERVER, mode], **extra)


async def make(started: list[McpTools], tmp_path: Path, servers: dict[str, McpServerConfig],
               env: dict[str, str] | None = None, approvals: Approvals | None = None) -> tuple[McpTools, ToolRegistry]:
    mcp = McpTools(servers, env or {}, tmp_path / "logs", approvals or Approvals())
    started.append(mcp)
    registry = ToolRegistry()
    registry.add_source(mcp.refresh)
    return mcp, registry


async def call(registry: ToolRegistry, name: str, ctx: ToolContext, **args: Any) -> str:
    return await registry.execute(name, json.dumps(args), ctx)


async def test_stdio_server_starts_on_first_use_and_its_tools_join_the_registry(
        started: list[McpTools], tmp_path: Path, ctx: ToolContext) -> None:
    mcp, registry = await make(started, tmp_path, {"calc": stdio()})
    assert not mcp.connections["calc"].running and registry.names == []  # nothing runs before it is needed
    await registry.refresh()
    assert sorted(registry.names) == ["calc__add", "calc__big", "calc__crash", "calc__echo", "calc__fail",
                                      "calc__pid", "calc__slow"]
    add = next(t for t in registry.get_openai_tools() if t["function"]["name"] == "calc__add")["function"]
    assert add["description"] == "Add two integers"
    assert add["parameters"]["properties"]["a"]["type"] == "integer"
    assert add["parameters"]["required"] == ["a", "b"]
    assert await call(registry, "calc__add", ctx, a=2, b=40) == "42"
    assert await call(registry, "calc__echo", ctx, text="héllo") == "echo: héllo"
    assert await call(registry, "calc__fail", ctx) == ("Error reported by the tool: Error executing tool fail: "
                                                         "the tool failed on purpose")
    assert mcp.status() == [("calc", "7 tools")]


async def test_allow_and_deny_lists_pick_the_tools(started: list[McpTools], tmp_path: Path) -> None:
    _, registry = await make(started, tmp_path, {"s": stdio(allow_tools=["e*", "add", "crash"], deny_tools=["crash"])})
    await registry.refresh()
    assert sorted(registry.names) == ["s__add", "s__echo"]


async def test_results_are_capped(started: list[McpTools], tmp_path: Path, ctx: ToolContext) -> None:
    _, registry = await make(started, tmp_path, {"s": stdio(max_result_chars=1000)})
    await registry.refresh()
    out = await call(registry, "s__big", ctx, size=5000)
    assert out == "x" * 1000 + "\n… [output cut at 1000 characters]"


async def test_a_slow_tool_is_stopped_at_the_timeout_and_the_server_keeps_working(
        started: list[McpTools], tmp_path: Path, ctx: ToolContext) -> None:
    _, registry = await make(started, tmp_path, {"s": stdio(timeout=0.5)})
    await registry.refresh()
    assert await call(registry, "s__slow", ctx, seconds=30) == "Error: s__slow took longer than 0.5 s and was stopped."
    assert await call(registry, "s__echo", ctx, text="still here") == "echo: still here"


async def test_a_crashed_server_is_restarted_after_a_backoff(
        started: list[McpTools], tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "BACKOFF_FIRST", 0.3)
    mcp, registry = await make(started, tmp_path, {"s": stdio()})
    await registry.refresh()
    first_pid = int(await call(registry, "s__pid", ctx))
    crashed = await call(registry, "s__crash", ctx)
    assert crashed == "Error: the MCP server 's' stopped during the call; it will be restarted."
    conn = mcp.connections["s"]
    assert conn.failures == 1 and not conn.running
    soon = await call(registry, "s__pid", ctx)  # inside the backoff: refused at once, with the reason
    assert soon.startswith("Error: the MCP server 's' is unavailable: it failed (the connection closed during a call); "
                           "the next start is allowed in 0.")
    await asyncio.sleep(conn.backoff_left())
    second_pid = int(await call(registry, "s__pid", ctx))
    assert second_pid != first_pid and conn.failures == 0
    with pytest.raises(ProcessLookupError):  # the crashed process is gone, not a zombie we still hold
        os.kill(first_pid, 0)


async def test_a_server_that_cannot_start_is_reported_and_does_not_block_others(
        started: list[McpTools], tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "BACKOFF_FIRST", 600.0)  # a loaded machine's pause must not outlast it
    mcp, registry = await make(started, tmp_path, {"bad": stdio("broken"), "good": stdio(allow_tools=["echo"])})
    await registry.refresh()
    assert registry.names == ["good__echo"]
    (bad, state), good = mcp.status()
    assert bad == "bad" and state.startswith("unavailable: ") and "(stderr: cannot start: no database)" in state
    assert good == ("good", "1 tools")
    assert mcp.connections["bad"].backoff_left() > 0  # not retried on every message
    missing = await make(started, tmp_path, {"x": McpServerConfig(command="/no/such/mcp-server")})
    await missing[1].refresh()
    assert missing[0].status() == [("x", "unavailable: command not found: /no/such/mcp-server")]


async def test_shutdown_stops_the_server_process(started: list[McpTools], tmp_path: Path, ctx: ToolContext) -> None:
    mcp, registry = await make(started, tmp_path, {"s": stdio()})
    await registry.refresh()
    pid = int(await call(registry, "s__pid", ctx))
    await mcp.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert (await call(registry, "s__pid", ctx)).endswith("is unavailable: the hub is shutting down")


async def test_calls_that_need_approval_wait_for_a_person(
        started: list[McpTools], tmp_path: Path, ctx: ToolContext) -> None:
    approvals = Approvals()
    _, registry = await make(started, tmp_path, {"s": stdio(require_approval=True)}, approvals=approvals)
    await registry.refresh()
    assert registry.get("s__add").needs_approval  # type: ignore[union-attr]
    prompts: list[Reply] = []
    answers = iter([Scope.ONCE, None])

    async def notify(reply: Reply) -> None:
        prompts.append(reply)
        if not reply.buttons:
            return  # a notice, not a question
        approval_id = reply.buttons[0][0].action.split()[1]
        decision = next(answers)
        asyncio.get_running_loop().call_soon(approvals.decide, ctx.chat, approval_id, decision, True)

    asking = replace(ctx, notify=notify, is_admin=True)
    assert await call(registry, "s__add", asking, a=1, b=2) == "3"
    assert "wants to call this MCP tool" in prompts[0].text and 's__add {"a": 1, "b": 2}' in prompts[0].text
    assert (await call(registry, "s__add", asking, a=1, b=2)).startswith("The user denied this call")
    assert (await call(registry, "s__add", ctx, a=1, b=2)).startswith("This tool needs approval in")
    stranger = replace(ctx, notify=notify)  # not an admin: nobody is asked, nothing runs
    assert await call(registry, "s__add", stranger, a=1, b=2) == (
        "Only an admin may approve this tool, so the call was not made.")
    assert prompts[-1].text.startswith("A person with admin rights must approve")


async def test_an_approval_prompt_shows_arguments_with_hidden_code_points_written_out(
        started: list[McpTools], tmp_path: Path, ctx: ToolContext) -> None:
    approvals = Approvals()
    _, registry = await make(started, tmp_path, {"s": stdio(require_approval=True)}, approvals=approvals)
    await registry.refresh()
    prompts: list[Reply] = []

    async def notify(reply: Reply) -> None:
        prompts.append(reply)
        approval_id = reply.buttons[0][0].action.split()[1]
        asyncio.get_running_loop().call_soon(approvals.decide, ctx.chat, approval_id, Scope.ONCE, True)

    answer = await call(registry, "s__echo", replace(ctx, notify=notify, is_admin=True), text="ok\u202e\u200bgnp.exe")
    assert answer == "echo: ok\u202e\u200bgnp.exe"  # what was approved is what ran
    assert 's__echo {"text": "ok⟨U+202E⟩⟨U+200B⟩gnp.exe"}' in prompts[0].text
    assert "\u202e" not in prompts[0].text
    assert approvals.pending() == []


@pytest_asyncio.fixture
async def http_server() -> AsyncIterator[str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, SERVER, "http", TOKEN, stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    port = int((await asyncio.wait_for(proc.stdout.readline(), 20)).decode())
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    await proc.wait()


async def test_streamable_http_server_with_headers_from_the_environment(
        started: list[McpTools], tmp_path: Path, ctx: ToolContext, http_server: str) -> None:
    cfg = McpServerConfig(url=http_server, headers={"Authorization": "Bearer ${REMOTE_TOKEN}"}, allow_tools=["echo"])
    _, registry = await make(started, tmp_path, {"remote": cfg}, env={"REMOTE_TOKEN": TOKEN})
    await registry.refresh()
    assert registry.names == ["remote__echo"]
    assert await call(registry, "remote__echo", ctx, text="over http") == "echo: over http"
    wrong, wrong_registry = await make(started, tmp_path, {"remote": cfg}, env={"REMOTE_TOKEN": "wrong"})
    await wrong_registry.refresh()
    assert wrong.status() == [("remote", "unavailable: Server returned an error response (HTTP 401)")]
    assert wrong_registry.names == []
    unset, unset_registry = await make(started, tmp_path, {"remote": cfg})
    await unset_registry.refresh()
    assert unset.status() == [("remote", "unavailable: environment variable REMOTE_TOKEN is not set")]
