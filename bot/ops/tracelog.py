"""The running agent run's trace id on every log line written while it runs (a contextvar, so concurrent runs
in other chats never mix), letting a user's error id and a dashboard trace lead to the same log lines."""

from __future__ import annotations

import logging
from contextvars import ContextVar

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s%(trace)s: %(message)s"
current_trace: ContextVar[str] = ContextVar("bothub_trace", default="")


class TraceField(logging.Filter):
    """Sets `record.trace` to " [trace <id>]" inside a run and to "" elsewhere, for LOG_FORMAT."""

    def __init__(self) -> None:
        super().__init__("trace")

    def filter(self, record: logging.LogRecord) -> bool:
        trace_id = current_trace.get()
        record.trace = f" [trace {trace_id}]" if trace_id else ""
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Attach the field to every handler of `logger` (the root by default); idempotent per handler."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, TraceField) for f in handler.filters):
            handler.addFilter(TraceField())
