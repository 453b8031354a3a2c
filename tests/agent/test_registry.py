"""The tool registry: every failure of a call becomes text the model reads (never an exception that ends the run),
results are cut at MAX_TOOL_OUTPUT, and an agent's view of the shared registry holds, lists and runs only what its
tool policy permits, tools found later included."""

from __future__ import annotations

import pytest

from bot.agent.tools import default_registry
from bot.agent.tools.registry import MAX_TOOL_OUTPUT, RegistryView, ToolContext, ToolRegistry
from bot.fleet.model import ToolPolicy

OBJECT = {"type": "object", "properties": {}}


async def echo(_ctx: ToolContext, text: str = "") -> str:
    return text


async def broken(_ctx: ToolContext) -> str:
    raise RuntimeError("disk on fire")


def names(specs: list[dict[str, object]]) -> list[str]:
    return [s["function"]["name"] for s in specs]  # type: ignore[index]


async def test_every_failure_of_a_call_is_text_for_the_model(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register("echo", "says it back", OBJECT, echo)
    registry.register("broken", "always fails", OBJECT, broken)
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("echo", "again", OBJECT, echo)
    assert await registry.execute("echo", '{"text": "hi"}', ctx) == "hi"
    assert await registry.execute("echo", "  ", ctx) == ""  # no arguments at all: none
    assert await registry.execute("nope", "{}", ctx) == "Error: unknown tool 'nope'. Available: echo, broken"
    assert (await registry.execute("echo", "{text", ctx)).startswith("Error: arguments for echo are not valid JSON (")
    assert await registry.execute("echo", '["hi"]', ctx) == "Error: arguments for echo must be a JSON object"
    assert (await registry.execute("echo", '{"txt": "hi"}', ctx)).startswith(
        "Error: bad arguments for echo: echo() got an unexpected keyword argument 'txt'")
    assert await registry.execute("broken", "{}", ctx) == "Error: broken failed: RuntimeError: disk on fire"
    long = await registry.execute("echo", f'{{"text": "{"x" * (MAX_TOOL_OUTPUT + 10)}"}}', ctx)
    assert long == "x" * MAX_TOOL_OUTPUT + f"\n… [output cut at {MAX_TOOL_OUTPUT} characters]"
    assert await ToolRegistry().execute("echo", "{}", ctx) == "Error: unknown tool 'echo'. Available: none"


def test_the_spec_list_is_shared_until_the_tools_change() -> None:
    registry = ToolRegistry()
    registry.register("echo", "says it back", OBJECT, echo)
    first = registry.get_openai_tools()
    assert registry.get_openai_tools() is first and names(first) == ["echo"]
    registry.register("broken", "always fails", OBJECT, broken)
    assert names(registry.get_openai_tools()) == ["echo", "broken"]
    registry.remove("echo")
    registry.remove("never-there")
    assert names(registry.get_openai_tools()) == ["broken"] and registry.names == ["broken"]
    assert registry.subset(["broken", "ghost"]).names == ["broken"]


async def test_an_agents_view_holds_lists_and_runs_only_what_its_policy_permits(ctx: ToolContext) -> None:
    base = default_registry()
    policy = ToolPolicy(allow=("read_file", "write_file", "demo__*"), deny=("write_*",), mcp=("demo",))
    view = RegistryView(base, policy.permits)
    assert set(view.names) == {"read_file"} and [t.name for t in view.tools] == ["read_file"]
    assert view.get("read_file") is base.get("read_file") and view.get("write_file") is None
    assert base.get("write_file") is not None
    specs = view.get_openai_tools()
    assert names(specs) == ["read_file"] and view.get_openai_tools() is specs
    assert await view.execute("write_file", '{"filepath": "a.txt", "content": "x"}', ctx) == (
        "Error: unknown tool 'write_file'. Available: read_file")
    assert not (ctx.workdir / "a.txt").exists()
    ctx.workdir.mkdir(parents=True)
    (ctx.workdir / "notes.txt").write_text("first line\n", encoding="utf-8")
    assert "first line" in await view.execute("read_file", '{"filepath": "notes.txt"}', ctx)
    assert view.subset(["read_file", "write_file", "shell"]).names == ["read_file"]

    async def found_later(registry: ToolRegistry) -> None:  # what an MCP server's tools arrive as
        for name in ("demo__ping", "other__ping"):
            if registry.get(name) is None:
                registry.register(name, "a server's tool", OBJECT, echo)

    base.add_source(found_later)
    await view.refresh()
    await view.refresh()  # cheap when nothing changed
    assert base.get("other__ping") is not None and view.get("other__ping") is None
    assert set(names(view.get_openai_tools())) == {"read_file", "demo__ping"}  # cut again from the new list
    view.register("demo__late", "registered through the view", OBJECT, echo)
    assert base.get("demo__late") is not None and "demo__late" in view.names
    assert await view.execute("demo__late", '{"text": "pong"}', ctx) == "pong"


def test_a_view_of_everything_is_the_registry() -> None:
    base = default_registry()
    view = RegistryView(base, ToolPolicy().permits)
    assert view.names == base.names and names(view.get_openai_tools()) == base.names
