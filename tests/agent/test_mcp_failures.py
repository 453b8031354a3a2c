"""An MCP server that never answers its handshake: stopped at start_timeout (its process ended, not left
running), reported, and no tools added."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from bot.agent.tools.mcp import McpTools
from bot.toolconfig import McpServerConfig
from tests.agent.test_mcp import make
from tests.harness import wait_for

SILENT = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_server_that_never_finishes_its_handshake_is_stopped_at_start_timeout(
        started: list[McpTools], tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    silent = McpServerConfig(command=sys.executable, args=["-c", SILENT, str(pid_file)], start_timeout=0.5)
    mcp, registry = await make(started, tmp_path, {"silent": silent})
    begun = asyncio.get_running_loop().time()
    await registry.refresh()
    assert asyncio.get_running_loop().time() - begun < 10
    assert registry.names == []
    [(name, state)] = mcp.status()
    assert (name, state) == ("silent", "unavailable: it did not start within 0.5 s")
    await wait_for(lambda: not alive(int(pid_file.read_text())), within=5)  # ended, not left to sleep
