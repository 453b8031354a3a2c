"""/tools: what the assistant can use in this chat, including each MCP server's tools or why it is down."""

from __future__ import annotations

from bot.agent.tools.registry import Tool
from bot.commands.registry import CommandContext, command
from bot.replies import Reply

_DESCRIPTION_CHARS = 90


@command("tools", "List the tools the assistant can use here", "列出助手在此可用的工具")
async def tools(ctx: CommandContext) -> Reply:
    registry, mcp = ctx.services.tools, ctx.services.mcp
    await registry.refresh()  # starts MCP servers not started yet, so the list is complete
    by_server = {server: mcp.tool_names(server) for server in mcp.connections}
    from_mcp = {name for names in by_server.values() for name in names}
    lines = [_line(ctx, tool) for tool in registry.tools if tool.name not in from_mcp]
    for server, state in mcp.status():
        lines += ["", ctx.t("tools_mcp_server", server=server, state=state)]
        lines += [_line(ctx, tool) for name in by_server[server] if (tool := registry.get(name)) is not None]
    return Reply("\n".join(lines) or ctx.t("tools_none"), title=ctx.t("tools_title"))


def _line(ctx: CommandContext, tool: Tool) -> str:
    first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
    if len(first) > _DESCRIPTION_CHARS:
        first = first[: _DESCRIPTION_CHARS - 1] + "…"
    mark = f" ({ctx.t('tools_asks')})" if tool.needs_approval else ""
    return f"· {tool.name}{mark}" + (f" — {first}" if first else "")
