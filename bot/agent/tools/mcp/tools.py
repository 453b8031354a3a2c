"""MCP servers' tools in the registry as `<server>__<tool>`, with the server's own JSON schemas.

Servers start on the first agent run that needs the tool list (never at hub start-up, so a broken server
cannot delay it), all at once. A call may first wait for an in-chat approval (`require_approval`), then
runs under the server's per-call timeout (`calls.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.agent.approvals import Approvals, Decision
from bot.agent.tools.mcp.errors import McpUnavailable
from bot.agent.tools.registry import ToolContext, ToolFunc, ToolRegistry
from bot.toolconfig import McpServerConfig

if TYPE_CHECKING:  # the SDK is imported only when servers are configured: it costs ~2 s of start-up
    import mcp_types as types

    from bot.agent.tools.mcp.connection import McpConnection

SEPARATOR = "__"
_NAME_LIMIT = 64  # what OpenAI-compatible APIs accept for a function name
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_DENIED = {
    Decision.DENIED: "The user denied this call; it was not made. Do not retry it; ask what they want instead.",
    Decision.EXPIRED: "No decision was made in time, so the call was not made.",
    Decision.UNAVAILABLE: "This tool needs approval in the chat, which is not possible here; the call was not made.",
    Decision.NOT_ADMIN: "Only an admin may approve this tool, so the call was not made.",
}


def tool_name(server: str, tool: str) -> str:
    return f"{server}{SEPARATOR}{_UNSAFE.sub('_', tool)}"[:_NAME_LIMIT]


def allowed(cfg: McpServerConfig, tool: str) -> bool:
    if cfg.allow_tools and not any(fnmatchcase(tool, pattern) for pattern in cfg.allow_tools):
        return False
    return not any(fnmatchcase(tool, pattern) for pattern in cfg.deny_tools)


class McpTools:
    """Owns one connection per configured server and keeps the registry in step with their listings."""

    def __init__(self, servers: Mapping[str, McpServerConfig], env: Mapping[str, str], log_dir: Path,
                 approvals: Approvals) -> None:
        self.connections: dict[str, McpConnection] = {}
        if servers:
            from bot.agent.tools.mcp.connection import McpConnection

            self.connections = {name: McpConnection(name, cfg, env, log_dir) for name, cfg in servers.items()}
        self.approvals = approvals
        self._listed: dict[str, list[types.Tool]] = {}  # the listing each server's registered tools came from
        self._names: dict[str, list[str]] = {}

    async def refresh(self, registry: ToolRegistry) -> None:
        """Start the servers whose tools are not known yet (unless backing off), then register what changed."""
        waiting = [c for c in self.connections.values() if c.tools is None and not c.backoff_left()]
        if waiting:
            await asyncio.gather(*(_try_start(c) for c in waiting))
        for name, conn in self.connections.items():
            if conn.tools is not None and conn.tools is not self._listed.get(name):
                self._sync(registry, conn, conn.tools)

    def _sync(self, registry: ToolRegistry, conn: McpConnection, listing: list[types.Tool]) -> None:
        for old in self._names.get(conn.name, []):
            registry.remove(old)
        names: list[str] = []
        for tool in listing:
            full = tool_name(conn.name, tool.name)
            if not allowed(conn.cfg, tool.name) or registry.get(full) is not None:
                continue
            schema = dict(tool.input_schema or {})
            schema.setdefault("type", "object")
            schema.setdefault("properties", {})
            description = tool.description or tool.title or f"{tool.name} (MCP server {conn.name})"
            registry.register(full, description, schema, self._caller(conn, tool.name, full),
                              needs_approval=conn.cfg.require_approval)
            names.append(full)
        self._listed[conn.name], self._names[conn.name] = listing, names

    def _caller(self, conn: McpConnection, tool: str, full: str) -> ToolFunc:
        async def call(ctx: ToolContext, **arguments: Any) -> str:
            if conn.cfg.require_approval:
                shown = f"{full} {json.dumps(arguments, ensure_ascii=False)}"
                decision = await self.approvals.ask(ctx, shown, False, action="call this MCP tool", kind="mcp")
                if decision in _DENIED:
                    return _DENIED[decision]
            from bot.agent.tools.mcp.calls import call_tool

            return await call_tool(conn, tool, full, arguments)

        return call

    def status(self) -> list[tuple[str, str]]:
        """(server, state) for /tools and doctor: its tools, its error, or that it has not started yet."""
        lines = []
        for name, conn in self.connections.items():
            if conn.tools is not None and conn.running:
                state = f"{len(self._names.get(name, []))} tools"
            elif conn.error:
                state = f"unavailable: {conn.error}"
            else:
                state = "starts on first use"
            lines.append((name, state))
        return lines

    def tool_names(self, server: str) -> list[str]:
        return list(self._names.get(server, []))

    async def stop(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()))


async def _try_start(conn: McpConnection) -> None:
    with contextlib.suppress(McpUnavailable):  # the reason is kept on the connection for /tools and doctor
        await conn.session()
