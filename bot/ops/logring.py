"""The last log lines in memory, for the dashboard's log view: a bounded ring, secrets masked on the way in.

The records are masked here as well as by the handlers' redacting filter, because this handler may be added
after that filter was installed (and a log view must never be the place a token leaks).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from bot.ops.redact import redact
from bot.ops.tracelog import current_trace

CAPACITY = 2000  # lines kept; older ones fall off
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


@dataclass(frozen=True, slots=True)
class LogLine:
    at: float  # seconds since the epoch
    level: str
    levelno: int
    logger: str
    message: str
    trace: str = ""


class LogRing(logging.Handler):
    def __init__(self, secrets: Iterable[str] = (), capacity: int = CAPACITY) -> None:
        super().__init__(logging.DEBUG)
        self.secrets = list(secrets)
        self.lines: deque[LogLine] = deque(maxlen=capacity)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info and record.exc_info[0] is not None:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            self.lines.append(LogLine(record.created, record.levelname, record.levelno, record.name,
                                      redact(text, self.secrets), current_trace.get()))
        except Exception:  # a log line must never break the code that logs it
            self.handleError(record)

    def tail(self, level: str = "INFO", limit: int = 500) -> list[LogLine]:
        """The newest `limit` lines at `level` or above, oldest first."""
        floor = logging.getLevelName(level) if level in LEVELS else logging.INFO
        picked = [line for line in reversed(self.lines) if line.levelno >= floor]
        return picked[:limit][::-1]


def install(secrets: Iterable[str], logger: logging.Logger | None = None) -> LogRing:
    """The root logger's ring (added once; the secrets are updated if it is there already)."""
    logger = logger or logging.getLogger()
    for handler in logger.handlers:
        if isinstance(handler, LogRing):
            handler.secrets = list(secrets)
            return handler
    ring = LogRing(secrets)
    logger.addHandler(ring)
    return ring
