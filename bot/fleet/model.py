"""Agents, identities and bindings: who answers (an agent), through which bot account (an identity), where
(a binding). Pure data, validated once; the default ones come from today's workspace, config and env
(bot/fleet/defaults.py), the others from the store (bot/store/fleet.py).

- An **Agent** is a persona and its means: a workspace folder (SOUL.md, AGENTS.md, roles, skills), a model or
  failover chain from `llm.chains`, a tools policy, a language and its own admins.
- An **Identity** is one bot account on one platform (a bot token, an application, an app …) with its
  credentials, named after the env vars the platform's spec reads (its `account`: ids and secrets), and settings that
  overlay the platform's config section (another `webhook_path`). The platform's default identity is named
  after the platform and keeps today's session keys; another one is reached as `platform@name`.
- A **Binding** routes an identity's messages to an agent, optionally narrowed to a chat, a thread, a user or
  the kind of chat; the most specific one that matches wins (`choose`).
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
DEFAULT_AGENT = "default"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)


def _name(value: str) -> str:
    if not NAME.fullmatch(value):
        raise ValueError(f"{value!r}: a name is 1-32 of a-z, 0-9, '-' and '_', starting with a letter")
    return value


class ToolPolicy(_Frozen):
    """Which tools an agent's runs may call: `allow` (names or globs; empty: every tool) minus `deny`; the shell
    only with `shell` (and `tools.shell_enabled` on); MCP servers by name (None: every configured one)."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    shell: bool = True
    mcp: tuple[str, ...] | None = None

    def permits(self, tool: str) -> bool:
        server, sep, _ = tool.partition("__")
        if sep and self.mcp is not None and server not in self.mcp:
            return False
        if tool == "shell" and not self.shell:
            return False
        allowed = not self.allow or any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.allow)
        return allowed and not any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.deny)


class Agent(_Frozen):
    name: str
    workspace: Path | None = None  # None: the configured workspace (the default agent's)
    model: str | None = None  # a chain name from llm.chains, or a model; None: llm.chat_model
    tools: ToolPolicy = Field(default_factory=ToolPolicy)
    language: Literal["en", "zh"] | None = None  # None: the configured language; a chat's /lang still wins
    admins: tuple[str, ...] = ()  # user ids who are admins wherever this agent answers, besides the platform's
    enabled: bool = True  # off: its bindings are passed over, the default agent answers there

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return _name(value)


class Identity(_Frozen):
    name: str  # the platform's name for its default identity
    platform: str
    enabled: bool = True
    settings: dict[str, Any] = Field(default_factory=dict)  # overlays the platform's config section
    credentials: dict[str, str] = Field(default_factory=dict, repr=False, exclude=True)  # env var → secret

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return _name(value)

    @property
    def tag(self) -> str:
        """What messages and session keys carry: empty for the platform's default identity."""
        return "" if self.name == self.platform else self.name


ChatKind = Literal["dm", "group"]


class Binding(_Frozen):
    identity: str
    agent: str
    chat_id: str | None = None
    thread_id: str | None = None  # needs chat_id
    user_id: str | None = None
    kind: ChatKind | None = None

    @model_validator(mode="after")
    def _thread_in_chat(self) -> Binding:
        if self.thread_id is not None and self.chat_id is None:
            raise ValueError("a binding to a thread names its chat too (chat_id)")
        return self

    @property
    def key(self) -> str:
        """One binding per place: applying the same place again replaces its agent."""
        parts = (self.identity, self.chat_id or "*", self.thread_id or "*", self.user_id or "*", self.kind or "*")
        return "/".join(parts)

    @property
    def specificity(self) -> int:
        """The precedence table (README "Agents and bots"): thread > chat > user > kind > the identity alone."""
        return (8 * (self.thread_id is not None) + 4 * (self.chat_id is not None) + 2 * (self.user_id is not None)
                + (self.kind is not None))

    def matches(self, chat_id: str, thread_id: str | None, user_id: str, is_group: bool) -> bool:
        return ((self.chat_id is None or self.chat_id == chat_id)
                and (self.thread_id is None or self.thread_id == thread_id)
                and (self.user_id is None or self.user_id == user_id)
                and (self.kind is None or self.kind == ("group" if is_group else "dm")))


def choose(bindings: list[Binding], chat_id: str, thread_id: str | None, user_id: str, is_group: bool) -> str:
    """The agent for a message among one identity's bindings: the most specific match, the earliest among equals;
    none matches: the default agent."""
    best: Binding | None = None
    for binding in bindings:
        if binding.matches(chat_id, thread_id, user_id, is_group) and (
                best is None or binding.specificity > best.specificity):
            best = binding
    return best.agent if best is not None else DEFAULT_AGENT
