"""The delegate tool's arguments as a model may send them: what is not a task or a list of tool names is refused
in words the model can act on, and what is starts exactly the task asked for."""

from __future__ import annotations

import json

from bot.agent.tools import delegate
from bot.agent.tools.delegate import Delegation
from bot.agent.tools.registry import ToolContext, ToolRegistry


async def test_the_delegate_tool_starts_only_a_well_formed_task(ctx: ToolContext) -> None:
    started: list[Delegation] = []

    async def start(_ctx: ToolContext, task: Delegation) -> str:
        started.append(task)
        return f"started t{len(started)}"

    registry = ToolRegistry()
    delegate.register(registry, start)

    async def call(**args: object) -> str:
        return await registry.execute(delegate.NAME, json.dumps(args), ctx)

    for args in ({"task": "   "}, {"task": 7}):
        assert await call(**args) == "Error: give the sub-agent its `task` as text."
    for tools in ("read_file", ["read_file", 3]):
        assert await call(task="sum up", tools=tools) == "Error: `tools` must be a list of tool names."
    assert started == []
    assert await call(task="  sum up the plan \n", role=" critic ", model="cheap") == "started t1"
    assert await call(task="look again", tools=["recall"]) == "started t2"
    assert started == [Delegation("sum up the plan", "critic", "cheap", None),
                       Delegation("look again", tools=("recall",))]
