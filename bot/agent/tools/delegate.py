"""`delegate`: hand a piece of work to a sub-agent that runs in the background, with its own role, model and tools.

The call returns at once: the task runs beside the chat (bot/hub/tasks.py), shows its progress in one message and
posts its result into this conversation when it is done, so the run that delegated ends and the chat goes on
answering meanwhile. A sub-agent cannot delegate in turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.agent.tools.registry import ToolContext, ToolRegistry

NAME = "delegate"
DESCRIPTION = (
    "Start a background sub-agent on a self-contained piece of work (research, a long analysis, a draft) while "
    "the conversation goes on. It returns at once with the task's id; the result is posted in this conversation "
    "when it is done (the user can list tasks with /tasks and stop one with /cancel <id>). Do not wait for it."
)
PARAMETERS = {
    "type": "object",
    "properties": {
        "task": {"type": "string", "description": "Everything the sub-agent needs to know: it sees this "
                 "conversation up to now and this text"},
        "role": {"type": "string", "description": "Optional: one of the workspace's roles for the sub-agent"},
        "model": {"type": "string", "description": "Optional: a model the user may choose, for the sub-agent"},
        "tools": {"type": "array", "items": {"type": "string"},
                  "description": "Optional: the only tools the sub-agent may use (default: yours)"},
    },
    "required": ["task"],
}


@dataclass(frozen=True, slots=True)
class Delegation:
    prompt: str
    role: str = ""
    model: str = ""
    tools: tuple[str, ...] | None = None


Start = Callable[[ToolContext, Delegation], Awaitable[str]]  # starts the task; what the model should hear


def register(registry: ToolRegistry, start: Start) -> None:
    async def delegate(ctx: ToolContext, task: str, role: str = "", model: str = "",
                       tools: list[str] | None = None) -> str:
        if not isinstance(task, str) or not task.strip():
            return "Error: give the sub-agent its `task` as text."
        if tools is not None and not (isinstance(tools, list) and all(isinstance(n, str) for n in tools)):
            return "Error: `tools` must be a list of tool names."
        return await start(ctx, Delegation(task.strip(), str(role).strip(), str(model).strip(),
                                           tuple(tools) if tools is not None else None))

    registry.register(NAME, DESCRIPTION, PARAMETERS, delegate)
