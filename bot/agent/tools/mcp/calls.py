"""One MCP tool call under the server's timeout; its result flattened to text and capped."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types as types
from mcp import MCPError

from bot.agent.tools.mcp.connection import McpConnection
from bot.agent.tools.mcp.errors import McpUnavailable


async def call_tool(conn: McpConnection, tool: str, full: str, arguments: dict[str, Any]) -> str:
    """One call under the server's timeout; every failure becomes text the model can act on."""
    try:
        session = await conn.session()
    except McpUnavailable as e:
        return f"Error: the MCP server {conn.name!r} is unavailable: {e}"
    try:
        async with asyncio.timeout(conn.cfg.timeout):
            result = await session.call_tool(tool, arguments)
    except TimeoutError:
        return f"Error: {full} took longer than {conn.cfg.timeout:g} s and was stopped."
    except MCPError as e:
        if e.code == types.CONNECTION_CLOSED:
            await conn.close_broken("the connection closed during a call")
            return f"Error: the MCP server {conn.name!r} stopped during the call; it will be restarted."
        return f"Error from {full}: {e.message}"
    except Exception as e:  # transport failures (e.g. HTTP server gone): restart on next use
        await conn.close_broken(f"{type(e).__name__}: {e}")
        return f"Error: the MCP server {conn.name!r} could not be reached ({type(e).__name__}); it will be restarted."
    conn.succeeded()
    return format_result(result, conn.cfg.max_result_chars)


def format_result(result: types.CallToolResult, limit: int) -> str:
    """Text blocks as they are; images, audio and binary resources as a short note (the model gets text)."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(f"[{block.type} {block.mime_type}, {len(block.data) * 3 // 4} bytes, not shown]")
        elif isinstance(block, types.EmbeddedResource):
            res = block.resource
            parts.append(res.text if isinstance(res, types.TextResourceContents) else f"[binary resource {res.uri}]")
        elif isinstance(block, types.ResourceLink):
            parts.append(f"[resource {block.uri}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts) or "(no output)"
    if result.is_error:
        text = f"Error reported by the tool: {text}"
    if len(text) > limit:
        text = text[:limit] + f"\n… [output cut at {limit} characters]"
    return text
