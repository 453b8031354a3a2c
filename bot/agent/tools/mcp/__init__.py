"""MCP tools: servers from `mcp.servers` in the config, their tools as `<server>__<tool>`.

Only `tools` is imported here: the SDK loads with the first configured server, not with the hub.
"""

from bot.agent.tools.mcp.errors import McpUnavailable
from bot.agent.tools.mcp.tools import McpTools, tool_name

__all__ = ["McpTools", "McpUnavailable", "tool_name"]
