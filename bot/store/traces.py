"""Run traces: what one agent run did (prompt sections, model turns, tool calls, tokens, timings).

A run writes its trace once, at its end, so tracing adds no database work while the answer is produced.
Each chat keeps only its newest traces, and old ones are pruned by age, so the table stays bounded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class PromptSection:
    name: str  # "SOUL", "MEMORY", … "history"
    tokens: int  # estimated
    items: int = 1  # messages, for the history


@dataclass(frozen=True, slots=True)
class TraceStep:
    """A model turn (`kind` "model": `name` is the model) or a tool call (`kind` "tool": `name` is the tool)."""

    kind: str
    name: str
    duration_ms: int
    outcome: str = "ok"  # "ok" | "error" (a tool's "Error: …" result, a failed model request)
    ttft_ms: int | None = None  # model turns: request → first streamed token
    prompt_tokens: int | None = None  # model turns: the provider's usage
    completion_tokens: int | None = None
    tool_calls: int = 0  # model turns: calls it asked for
    arguments: str = ""  # tool calls: the model's arguments, secrets masked, capped
    result_chars: int = 0  # tool calls: size of the result handed back to the model
    reasoning: str = ""  # model turns: the thinking the model streamed, capped
    cost: float | None = None  # model turns: money by the price table (None: the model has no price)


@dataclass(frozen=True, slots=True)
class Trace:
    id: str
    chat: str
    conversation_id: str | None
    started_at: datetime
    model: str
    outcome: str  # "ok" | "failed" | "interrupted" | "deadline"
    duration_ms: int
    ttft_ms: int | None  # run start → first text shown
    prompt_tokens: int  # summed over the model turns (the provider's usage)
    completion_tokens: int
    sections: tuple[PromptSection, ...]
    steps: tuple[TraceStep, ...]
    error_id: str | None = None  # the id the user was shown when the run failed

    @property
    def cost(self) -> float | None:
        """The run's money over its priced model turns; None when none had a price."""
        costs = [s.cost for s in self.steps if s.cost is not None]
        return sum(costs) if costs else None

    def detail_json(self) -> str:
        """Sections and steps as one JSON text: how both backends store them."""
        sections = [[s.name, s.tokens, s.items] for s in self.sections]
        return json.dumps({"sections": sections, "steps": [_compact(s) for s in self.steps]},
                          ensure_ascii=False, separators=(",", ":"))


_STEP_FIELDS = tuple(f.name for f in fields(TraceStep))
_STEP_DEFAULTS = TraceStep("", "", 0)
_REQUIRED = frozenset({"kind", "name", "duration_ms"})


def _compact(step: TraceStep) -> dict[str, Any]:
    """The step without the fields left at their defaults (a tool call has no tokens, a model turn no arguments).

    Built by hand: `dataclasses.asdict` deep-copies and cost more than the rest of a trace together.
    """
    return {k: v for k in _STEP_FIELDS
            if (v := getattr(step, k)) != getattr(_STEP_DEFAULTS, k) or k in _REQUIRED}


def parse_detail(text: str) -> tuple[tuple[PromptSection, ...], tuple[TraceStep, ...]]:
    data = json.loads(text)
    return (tuple(PromptSection(*s) for s in data.get("sections", ())),
            tuple(TraceStep(**s) for s in data.get("steps", ())))


class TraceStore(Protocol):
    async def add(self, traces: Sequence[Trace], keep_per_chat: int) -> None:
        """Store finished runs in one operation; each chat they belong to keeps only its newest `keep_per_chat`."""
        ...

    async def get(self, chat: str, trace_id: str) -> Trace | None:
        """A trace of this chat; None for an unknown id or another chat's trace."""
        ...

    async def prune(self, before: datetime) -> int:
        """Delete traces of runs started before `before`; returns how many."""
        ...
