"""Built-in tools. Adding one: a module with `register(registry)` plus one line in `_MODULES`."""

from __future__ import annotations

from bot.agent.tools import documents, file_search, files
from bot.agent.tools.registry import ToolRegistry

_MODULES = (files, file_search, documents)


def default_registry() -> ToolRegistry:
    """A fresh registry holding every built-in tool."""
    registry = ToolRegistry()
    for module in _MODULES:
        module.register(registry)
    return registry
