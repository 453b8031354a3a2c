"""The tools' configuration: the built-in tools' switches and limits (`tools:`), and MCP servers (`mcp:`).

Apart from bot/config.py so that file stays one screenful of the hub's own sections; `Config` holds these.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from bot.llmconfig import Section as _Section


class ToolsConfig(_Section):
    shell_enabled: bool = False
    shell_timeout: float = Field(default=30.0, gt=0)
    shell_network: bool = False  # on: the sandboxed shell reaches public addresses only, via the egress proxy
    web_fetch_enabled: bool = True
    web_allow_hosts: list[str] = Field(default_factory=list)  # exceptions to the SSRF rules, for tests
    web_search_backend: Literal["", "searxng", "brave", "tavily"] = ""  # "" = no web_search tool
    web_search_url: str = ""  # SearXNG's address (required for it); Brave and Tavily default to their APIs
    web_search_results: int = Field(default=5, ge=1, le=10)
    web_search_per_minute: int = Field(default=10, ge=1)  # per chat
    browser_enabled: bool = False  # the browse tool (admins only): a sandboxed Chromium behind the SSRF guard
    browser_timeout: float = Field(default=30.0, gt=0)  # seconds per browse call
    browser_memory_mb: int = Field(default=1024, ge=128)  # the browser's whole process tree, where cgroups allow

    @model_validator(mode="after")
    def _searxng_has_an_address(self) -> ToolsConfig:
        if self.web_search_backend == "searxng" and not self.web_search_url:
            raise ValueError("web_search_backend searxng needs web_search_url, your instance's address")
        return self


class McpServerConfig(_Section):
    """One MCP server: a stdio `command` (with args, env) or a streamable-HTTP `url` (with headers).

    `${NAME}` in env values, the url and header values is read from the environment, so tokens stay out of YAML.
    """

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    allow_tools: list[str] = Field(default_factory=list)  # names or globs; empty means all
    deny_tools: list[str] = Field(default_factory=list)
    require_approval: bool = False  # every call waits for an in-chat approval, like shell
    timeout: float = Field(default=60.0, gt=0)  # seconds per call
    start_timeout: float = Field(default=30.0, gt=0)
    max_result_chars: int = Field(default=20_000, ge=100)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if bool(self.command) == bool(self.url):
            raise ValueError("give either 'command' (stdio) or 'url' (streamable HTTP), not both or neither")
        return self


class McpConfig(_Section):
    servers: dict[str, McpServerConfig] = Field(default_factory=dict)

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in servers:  # becomes the prefix of tool names: <server>__<tool>
            if not re.fullmatch(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*", name) or len(name) > 32:
                raise ValueError(f"server name {name!r}: letters, digits, '-' and single '_', at most 32")
        return servers
