"""Standing approvals: "always allow this exact command in this chat" (or only in one conversation).

A rule holds the command's exact text; it approves that text and nothing else, never a prefix, a pattern
or a command that merely contains it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    id: int
    chat: str  # the chat's storage key
    conversation: str | None  # None: every conversation of the chat
    kind: str  # what it approves: "shell" commands or "mcp" tool calls
    command: str  # the exact text that was approved
    granted_by: str  # who chose it ("<platform>:<user id>", or "dashboard")
    created_at: datetime


class ApprovalRuleStore(Protocol):
    async def add(self, chat: str, conversation: str | None, kind: str, command: str,
                  granted_by: str) -> ApprovalRule: ...

    async def find(self, chat: str, conversation: str | None, kind: str, command: str) -> ApprovalRule | None:
        """The rule approving exactly this command here: the chat's, or this conversation's."""
        ...

    async def list(self, chat: str | None = None) -> list[ApprovalRule]:
        """Rules of one chat (None: every chat, for the dashboard), oldest first."""
        ...

    async def revoke(self, rule_id: int, chat: str | None = None) -> ApprovalRule | None:
        """Delete a rule (only if it belongs to `chat`, when given); the rule that went, or None."""
        ...
