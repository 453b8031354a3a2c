"""What an agent run emits, in order; the hub persists step messages and streams text to the chat."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolStarted:
    name: str
    arguments: str  # raw JSON text from the model


@dataclass(frozen=True, slots=True)
class ToolFinished:
    name: str
    result: str  # already capped


@dataclass(frozen=True, slots=True)
class StepMessage:
    """An assistant or tool message to append to the conversation tree, in this order."""

    role: str  # "assistant" | "tool"
    content: str
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class RunFinished:
    text: str  # the final assistant text shown to the user
    prompt_tokens: int | None = field(default=None, compare=False)  # the provider's count for the last request


@dataclass(frozen=True, slots=True)
class RunFailed:
    kind: str  # "rate_limit" | "timeout" | "server" | "context" | "auth" | "turns" | "connection" | "other"
    error_id: str  # short id shown to the user and logged with the details
    detail: str  # for logs only; never shown to users


AgentEvent = TextDelta | ToolStarted | ToolFinished | StepMessage | RunFinished | RunFailed
