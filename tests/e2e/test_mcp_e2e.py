"""MCP in the running app: tools offered to the model, called from a chat and from a tool skill, /tools, doctor."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.agent.workspace import init_workspace
from bot.cli import doctor
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, make_config, running_app, wait_for

SERVER = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")
SKILL = """---
name: math
description: Does arithmetic with the calculator
mode: tool
tools: [calc__add]
---
Use calc__add for every sum.
"""


def servers() -> dict[str, Any]:
    return {"mcp": {"servers": {
        "calc": {"command": sys.executable, "args": [SERVER, "stdio"], "allow_tools": ["add", "pid", "echo"]},
        "bad": {"command": sys.executable, "args": [SERVER, "broken"]},
    }}}


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request["body"].get("tools", [])]


async def test_chat_uses_mcp_tools_directly_and_through_a_skill(tmp_path: Path, fake: FakeOpenAI) -> None:
    workspace = tmp_path / "ws"
    init_workspace(workspace)
    (workspace / "skills" / "math.md").write_text(SKILL, encoding="utf-8")
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,),
                           config={**servers(), "workspace": str(workspace)}) as app:
        fake.script(ToolCalls([("c1", "calc__add", '{"a": 2, "b": 3}'), ("c2", "calc__pid", "{}")]), Text("five"))
        await rec.say("what is 2+3?")
        await wait_for(lambda: rec.texts()[-1:] == ["five"])
        await app.hub.idle()
        first = fake.requests[0]
        assert {"calc__add", "calc__pid", "calc__echo", "skill_math"} <= set(tool_names(first))
        assert not any(name.startswith("bad__") for name in tool_names(first))
        assert "calc__add" in first["body"]["messages"][0]["content"]  # the system prompt names it too
        results = [m for m in fake.requests[1]["body"]["messages"] if m["role"] == "tool"]
        assert results[0] == {"role": "tool", "tool_call_id": "c1", "content": "5"}
        server_pid = int(results[1]["content"])

        fake.script(ToolCalls([("s1", "skill_math", '{"task": "2+2"}')]),
                    ToolCalls([("n1", "calc__add", '{"a": 2, "b": 2}')]), Text("4"), Text("it is 4"))
        await rec.say("and 2+2?")
        await wait_for(lambda: rec.texts()[-1:] == ["it is 4"])
        nested = fake.requests[3]
        assert tool_names(nested) == ["calc__add"]  # the skill sees only the MCP tool it lists
        assert fake.requests[4]["body"]["messages"][-1] == {"role": "tool", "tool_call_id": "n1", "content": "4"}

        await rec.say("/tools")
        await wait_for(lambda: rec.texts()[-1].startswith("· "))
        listing = rec.texts()[-1]
        assert "· skill_math — Does arithmetic with the calculator" in listing
        assert "MCP server calc: 3 tools\n· calc__echo — Echo the text back\n· calc__add — Add two integers" in listing
        assert "MCP server bad: unavailable: " in listing and "cannot start: no database" in listing
    with pytest.raises(ProcessLookupError):  # the hub's shutdown stopped the server
        os.kill(server_pid, 0)


async def test_doctor_lists_each_servers_tools_or_its_error(
        tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    cfg, env = make_config(tmp_path, fake.base_url, config=servers())
    init_workspace(cfg.workspace_dir)
    assert await doctor.run(cfg, env) == 1
    out = capsys.readouterr().out
    assert "✔ MCP server calc: 3 tools: calc__echo, calc__add, calc__pid" in out
    assert "✘ MCP server bad: " in out and "(stderr: cannot start: no database)" in out
