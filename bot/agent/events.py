"""What an agent run emits, in order; the hub persists step messages and streams text to the chat."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class FailureKind(StrEnum):
    """Why a run failed, as far as the user is told: each has its reason line, `reason_<value>` in bot/i18n.py."""

    RATE_LIMIT = "rate_limit"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    SERVER = "server"
    CONTEXT = "context"  # the conversation is over the model's window
    AUTH = "auth"
    TURNS = "turns"  # the run used up its model turns
    OTHER = "other"

    @property
    def reason(self) -> str:
        """The i18n key of the line that says it."""
        return f"reason_{self.value}"


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """Thinking the model streams, with thinking mode on: shown folded before the answer, never part of it."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolStarted:
    name: str
    arguments: str  # raw JSON text from the model


@dataclass(frozen=True, slots=True)
class ToolFinished:
    name: str
    result: str  # already capped

    @property
    def ok(self) -> bool:
        """Tools report a failure as text for the model that starts with "Error:" (the registry's too)."""
        return not self.result.startswith("Error:")


@dataclass(frozen=True, slots=True)
class ModelTurn:
    """One model request ended: what it cost and how long it took (for the run's trace)."""

    model: str
    seconds: float
    first_token: float | None = None  # seconds from the request to the first streamed token
    prompt_tokens: int | None = None  # the provider's usage, when it reports one
    completion_tokens: int | None = None
    tool_calls: int = 0
    failed: FailureKind | None = None  # why the request failed, if it did
    reasoning: str = ""  # the thinking the model streamed (never part of the answer)
    cost: float | None = None  # money for this request by the price table; None: no price known


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
    kind: FailureKind
    error_id: str  # short id shown to the user and logged with the details
    detail: str  # for logs only; never shown to users


AgentEvent = TextDelta | ReasoningDelta | ModelTurn | ToolStarted | ToolFinished | StepMessage | RunFinished | RunFailed
