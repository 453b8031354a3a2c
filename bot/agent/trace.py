"""Run traces: each agent run's steps collected from its events, then stored once, after the run, in batches.

Recording is a few appends per event; nothing touches the database while the answer is produced. The
writer hands finished traces to the store in one operation per batch, in a task of its own, so a burst of
runs costs one write, and a slow or failing database never holds up an answer.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from secrets import token_hex
from typing import TYPE_CHECKING, Any

from bot.agent.batches import BatchWriter
from bot.agent.events import AgentEvent, ModelTurn, RunFailed, RunFinished, TextDelta, ToolFinished, ToolStarted
from bot.agent.prompt import MESSAGE_OVERHEAD
from bot.agent.tokens import TokenCounter, estimate_tokens
from bot.config import ConfigError
from bot.ops.redact import redact
from bot.store.traces import PromptSection, Trace, TraceStep, TraceStore
from bot.tree.model import utc_now

if TYPE_CHECKING:
    from bot.agent.otel import OtelExport

MAX_ARGUMENTS = 2000  # characters of a tool call's arguments kept in its trace
MAX_REASONING = 8000  # characters of a model turn's thinking kept in its trace


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


class RunTrace:
    """One run's trace as it happens; `trace()` is the record to store."""

    def __init__(self, chat: str, conversation_id: str | None, model: str, secrets: Sequence[str] = ()) -> None:
        self.id = token_hex(8)
        self.chat, self.conversation_id, self.model = chat, conversation_id, model
        self.outcome = "error"  # until the run says how it ended (or the runner: interrupted, deadline)
        self.error_id: str | None = None
        self._secrets = secrets
        self._started_at, self._t0 = utc_now(), time.monotonic()
        self._first_text: float | None = None
        self._ended: float | None = None
        self._sections: list[PromptSection] = []
        self._history = PromptSection("history", 0, 0)
        self._steps: list[TraceStep] = []
        self.step_starts: list[float] = []  # seconds from the run's start to each step's (OpenTelemetry spans)
        self._tool: tuple[ToolStarted, float] | None = None

    def prompt(self, sections: Sequence[tuple[str, str]], counter: TokenCounter) -> None:
        self._sections = [PromptSection(name, counter.count(text)) for name, text in sections]

    def history(self, messages: Sequence[dict[str, Any]], counter: TokenCounter) -> None:
        """The messages sent after the system prompt (a retry with less history replaces them): their text's
        estimate (cached per string), as `fit_history` counts it, without the JSON of tool calls."""
        text = sum(estimate_tokens(c) for m in messages if isinstance(c := m.get("content"), str))
        tokens = round(text * counter.ratio) + MESSAGE_OVERHEAD * len(messages)
        self._history = PromptSection("history", tokens, len(messages))

    def observe(self, event: AgentEvent) -> None:
        if type(event) is TextDelta:  # the most frequent event by far: one check, no clock once text has begun
            if self._first_text is None:
                self._first_text = time.monotonic() - self._t0
            return
        now = time.monotonic()
        if isinstance(event, ModelTurn):
            self.step_starts.append(max(0.0, now - event.seconds - self._t0))
            self._steps.append(TraceStep("model", event.model, _ms(event.seconds) or 0,
                                         "error" if event.failed else "ok", _ms(event.first_token),
                                         event.prompt_tokens, event.completion_tokens, event.tool_calls,
                                         reasoning=event.reasoning[:MAX_REASONING], cost=event.cost))
        elif isinstance(event, ToolStarted):
            self._tool = (event, now)
        elif isinstance(event, ToolFinished) and self._tool is not None:
            started, at = self._tool
            arguments = redact(readable(started.arguments), self._secrets)[:MAX_ARGUMENTS]
            self.step_starts.append(at - self._t0)
            self._steps.append(TraceStep("tool", event.name, _ms(now - at) or 0, "ok" if event.ok else "error",
                                         arguments=arguments, result_chars=len(event.result)))
            self._tool = None
        elif isinstance(event, RunFinished | RunFailed):
            self._ended = now
            self.outcome = "ok" if isinstance(event, RunFinished) else "failed"
            self.error_id = event.error_id if isinstance(event, RunFailed) else None

    def trace(self) -> Trace:
        ended = self._ended if self._ended is not None else time.monotonic()
        models = [s for s in self._steps if s.kind == "model"]
        return Trace(self.id, self.chat, self.conversation_id, self._started_at, self.model, self.outcome,
                     _ms(ended - self._t0) or 0, _ms(self._first_text),
                     sum(s.prompt_tokens or 0 for s in models), sum(s.completion_tokens or 0 for s in models),
                     (*self._sections, self._history), tuple(self._steps), self.error_id)


class TraceWriter(BatchWriter[Trace]):
    """Stores finished traces off the runs' path: one store operation per batch of whatever has accumulated."""

    def __init__(self, store: TraceStore, keep_per_chat: int) -> None:
        super().__init__(lambda batch: store.add(batch, keep_per_chat), "run trace", logging.getLogger("bothub.traces"))
        self.store = store

    async def find(self, chat: str, trace_id: str) -> Trace | None:
        """A chat's trace, stored or still waiting for its batch (a /tree right after the answer)."""
        waiting = next((t for t in self.unwritten() if t.id == trace_id and t.chat == chat), None)
        return waiting or await self.store.get(chat, trace_id)


class Tracer:
    """Starts a run's trace and hands the finished one to the writer (none: kept nowhere, e.g. in unit tests)
    and to `export` (OpenTelemetry, when an OTLP endpoint is set)."""

    def __init__(self, writer: TraceWriter | None, secrets: Sequence[str] = (),
                 export: Callable[[Trace, Sequence[float]], None] | None = None) -> None:
        self.writer = writer
        self._secrets = list(secrets)
        self._export = export

    def start(self, chat: str, conversation_id: str | None, model: str) -> RunTrace:
        return RunTrace(chat, conversation_id, model, self._secrets)

    def finish(self, run: RunTrace) -> Trace:
        done = run.trace()
        if self.writer is not None:
            self.writer.submit(done)
        if self._export is not None:
            self._export(done, run.step_starts)
        return done


def otel_export(endpoint: str | None) -> OtelExport | None:
    """The OpenTelemetry export when `traces.otlp_endpoint` is set; its SDK is imported only then."""
    if endpoint is None:
        return None
    try:
        from bot.agent.otel import OtelExport
    except ImportError as e:
        raise ConfigError("traces.otlp_endpoint is set, but the OpenTelemetry SDK is not installed: "
                          "pip install 'bothub[otel]'") from e
    return OtelExport(endpoint)


def readable(arguments: str) -> str:
    """Tool arguments as people read them: models often escape Chinese (`\\u7528\\u6237`); the trace shows 用户."""
    if "\\u" not in arguments:
        return arguments
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False)
    except ValueError:
        return arguments
