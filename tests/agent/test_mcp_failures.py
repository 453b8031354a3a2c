"""An MCP server that never answers its handshake: stopped at start_timeout, reported, and no tools added."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from bot.agent.tools.mcp import McpTools
from bot.agent.tools.registry import ToolContext
from bot.toolconfig import McpServerConfig
from tests.agent.test_mcp import make


async def test_a_server_that_never_finishes_its_handshake_is_stopped_at_start_timeout(
        started: list[McpTools], tmp_path: Path, ctx: ToolContext) -> None:
    silent = McpServerConfig(command=sys.executable, args=["-c", "import time; time.sleep(60)"], start_timeout=0.5)
    mcp, registry = await make(started, tmp_path, {"silent": silent})
    begun = asyncio.get_running_loop().time()
    await registry.refresh()
    assert asyncio.get_running_loop().time() - begun < 10
    assert registry.names == []
    [(name, state)] = mcp.status()
    assert (name, state) == ("silent", "unavailable: it did not start within 0.5 s")
