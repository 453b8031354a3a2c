"""Routes tool calls by name; each tool owns its own formatting and limits (seed 000)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.adapter import OutgoingFile
from bot.messages import ChatRef
from bot.replies import Reply

MAX_TOOL_OUTPUT = 50_000  # characters of one tool result handed back to the model


Notify = Callable[[Reply], Awaitable[object]]  # sends a message to the run's own chat
SendFile = Callable[[OutgoingFile], Awaitable[str]]  # answers what the model should hear (sent, or why not)


@dataclass(frozen=True)
class ToolContext:
    """Who is calling and where: tools must stay inside `workdir` and this chat's data."""

    chat: str  # the session's storage key
    workdir: Path  # this chat's own folder; file tools are jailed here
    user_id: str = ""
    user_name: str = ""
    is_admin: bool = False
    is_group: bool = False
    notify: Notify | None = None  # how approvals ask in this chat; None: this run cannot ask anyone
    skill_chain: tuple[str, ...] = ()  # tool skills this call is nested in, outermost first (depth and cycles)
    where: ChatRef | None = None  # the chat's address, for tools that act later (schedule)
    conversation_id: str | None = None
    send_file: SendFile | None = None  # posts a file from the chat's folder in this chat; None: cannot
    user_text: str = ""  # what the user said this turn (memory keeps tool output only when asked to)
    lang: str = ""  # the chat's language for what the run itself says (a budget refusal); "": the bot's
    tool_results: list[str] = field(default_factory=list)  # this turn's tool results so far, oldest first
    sees_images: bool = False  # the run's model takes images: a tool may show it one (browse's screenshots)
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (mime, bytes) for the model after this step
    # the run's newest message, once its writes so far are stored: what a side branch started now hangs under
    anchor: Callable[[], Awaitable[str | None]] | None = None


ToolFunc = Callable[..., Awaitable[str]]
ToolSource = Callable[["ToolRegistry"], Awaitable[None]]  # adds tools known only at run time (MCP servers)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    func: ToolFunc  # async (ctx, **arguments) -> str
    needs_approval: bool = False  # every call waits for a person in the chat


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = []
        self._specs: list[dict[str, Any]] | None = None  # get_openai_tools, until the tools change

    def register(self, name: str, description: str, parameters: dict[str, Any], func: ToolFunc,
                 needs_approval: bool = False) -> None:
        if name in self._tools:
            raise ValueError(f"tool {name!r} registered twice")
        self._tools[name] = Tool(name, description, parameters, func, needs_approval)
        self._specs = None

    def remove(self, name: str) -> None:
        self._tools.pop(name, None)
        self._specs = None

    def add_source(self, source: ToolSource) -> None:
        self._sources.append(source)

    async def refresh(self) -> None:
        """Let each source add the tools it has found since; cheap when nothing changed."""
        for source in self._sources:
            await source(self)

    @property
    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def subset(self, names: list[str]) -> ToolRegistry:
        """A registry holding only `names` (unknown names are ignored), e.g. for a tool skill."""
        sub = ToolRegistry()
        sub._tools = {n: t for n, t in self._tools.items() if n in names}
        return sub

    def get_openai_tools(self) -> list[dict[str, Any]]:
        """The tools as the API takes them: one shared list (not to be modified) until a tool is added or removed,
        so the LLM client encodes it once rather than with every request."""
        if self._specs is None:
            self._specs = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in self._tools.values()
            ]
        return self._specs

    async def execute(self, name: str, arguments: str, ctx: ToolContext) -> str:
        """Run a tool; every failure becomes text the model can read, never an exception."""
        tool = self._tools.get(name)
        if tool is None:
            return f"Error: unknown tool {name!r}. Available: {', '.join(self._tools) or 'none'}"
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as e:
            return f"Error: arguments for {name} are not valid JSON ({e.msg})"
        if not isinstance(args, dict):
            return f"Error: arguments for {name} must be a JSON object"
        try:
            result = await tool.func(ctx, **args)
        except TypeError as e:
            return f"Error: bad arguments for {name}: {e}"
        except Exception as e:  # a tool bug must not kill the run
            return f"Error: {name} failed: {type(e).__name__}: {e}"
        if len(result) > MAX_TOOL_OUTPUT:
            result = result[:MAX_TOOL_OUTPUT] + f"\n… [output cut at {MAX_TOOL_OUTPUT} characters]"
        return result


class RegistryView(ToolRegistry):
    """One agent's tools: the shared registry (MCP tools found later included) seen through its policy."""

    def __init__(self, base: ToolRegistry, permits: Callable[[str], bool]) -> None:
        super().__init__()
        self._base = base
        self._permits = permits
        self._seen: list[dict[str, Any]] | None = None  # the base's spec list the cached one was cut from

    def register(self, name: str, description: str, parameters: dict[str, Any], func: ToolFunc,
                 needs_approval: bool = False) -> None:
        self._base.register(name, description, parameters, func, needs_approval)

    async def refresh(self) -> None:
        await self._base.refresh()

    @property
    def tools(self) -> list[Tool]:
        return [t for t in self._base.tools if self._permits(t.name)]

    def get(self, name: str) -> Tool | None:
        return self._base.get(name) if self._permits(name) else None

    @property
    def names(self) -> list[str]:
        return [n for n in self._base.names if self._permits(n)]

    def subset(self, names: list[str]) -> ToolRegistry:
        return self._base.subset([n for n in names if self._permits(n)])

    def get_openai_tools(self) -> list[dict[str, Any]]:
        specs = self._base.get_openai_tools()
        if self._specs is None or self._seen is not specs:
            self._seen = specs
            self._specs = [s for s in specs if self._permits(s["function"]["name"])]
        return self._specs

    async def execute(self, name: str, arguments: str, ctx: ToolContext) -> str:
        if not self._permits(name):
            return f"Error: unknown tool {name!r}. Available: {', '.join(self.names) or 'none'}"
        return await self._base.execute(name, arguments, ctx)
