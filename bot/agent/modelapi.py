"""What every provider kind streams for one model turn, and the interface each one implements.

A wire protocol (OpenAI-compatible Chat Completions, Anthropic Messages) is one class that turns our
OpenAI-shaped history and tool list into its requests and its stream back into these items; the failover
chain (bot/agent/llm.py) only sees this interface.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bot.agent.events import FailureKind


@dataclass(frozen=True, slots=True)
class TextChunk:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningChunk:
    """Thinking the model streams before its answer: never part of the answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text, as the model produced it

    def to_openai(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": self.arguments}
        return {"id": self.id, "type": "function", "function": function}


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0  # all input tokens, cached ones included
    completion_tokens: int = 0  # output tokens, thinking included
    cached_tokens: int = 0  # input tokens read from the provider's prompt cache

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens,
                     self.cached_tokens + other.cached_tokens)


@dataclass(frozen=True, slots=True)
class Completion:
    """The end of one streamed turn: everything the caller needs to store it or run its tools."""

    text: str
    tool_calls: list[ToolCall]
    finish_reason: str | None
    usage: Usage | None
    first_token: float | None = None  # seconds from sending the request to the first streamed item
    reasoning: str = ""  # the turn's thinking, kept apart from `text`
    model: str = ""  # which link answered ("provider/model"), set by the chain
    cost: float | None = None  # from `usage` and the price table, when the model has a price


StreamItem = TextChunk | ReasoningChunk | Completion


class ModelAPI(Protocol):
    """One provider of one kind. `stream` yields chunks then exactly one Completion, or raises LLMError."""

    def stream(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, model: str,
               retries: int | None = None) -> AsyncIterator[StreamItem]: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Failover:
    """A link failed and the chain moved on: the trace records the failed link."""

    model: str  # the failed link's label
    kind: FailureKind  # its failure kind
    seconds: float  # how long the failed request took
    mid_answer: bool = False  # it had streamed part of the answer, which the next link continues


def merged_turns(messages: list[dict[str, Any]], assistant: str, key: str,
                 parts: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Native APIs want alternating user/assistant turns: each message's parts (tool results are the user's),
    same-role neighbours merged, empty ones left out. `assistant` and `key` are the API's names."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = assistant if message.get("role") == "assistant" else "user"
        found = parts(message)
        if not found:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1][key].extend(found)
        else:
            turns.append({"role": role, key: found})
    return turns
