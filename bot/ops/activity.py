"""What happened lately, in memory, for the dashboard's overview and live feed.

Metrics answer Prometheus with totals since start; a person looking at the overview wants the last
minutes: messages per minute, how long people waited for the first text, which errors (with their ids),
tokens per model today. Everything here is bounded (a window of minutes, a few hundred samples), and a
listener (the live feed) is called for each event, on the event loop, so it must not block.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

WINDOW_MINUTES = 30
LATENCY_SAMPLES = 500
RECENT_ERRORS = 20


@dataclass(frozen=True, slots=True)
class Event:
    at: float  # wall clock (seconds)
    kind: str  # "in" | "out" | "tool" | "first_text" | "run" | "error"
    platform: str = ""
    detail: str = ""  # tool name, run outcome, error kind and id
    value: float = 0.0  # seconds (first text, run) where it applies
    chat: str = ""  # errors: the chat's storage key, when one run failed
    trace: str = ""  # errors: that run's trace id


Listener = Callable[[Event], None]


def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile, None without samples."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))]


class Activity:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._minutes: dict[int, Counter[str]] = {}  # minute number → counts by event kind
        self._first_text: deque[float] = deque(maxlen=LATENCY_SAMPLES)
        self.errors: deque[Event] = deque(maxlen=RECENT_ERRORS)
        self._tokens: Counter[str] = Counter()
        self._tokens_day = ""
        self._listeners: set[Listener] = set()

    def record(self, kind: str, platform: str = "", detail: str = "", value: float = 0.0, chat: str = "",
               trace: str = "") -> None:
        event = Event(self._clock(), kind, platform, detail, value, chat, trace)
        minute = int(event.at // 60)
        self._minutes.setdefault(minute, Counter())[kind] += 1
        for old in [m for m in self._minutes if m <= minute - WINDOW_MINUTES]:
            del self._minutes[old]
        if kind == "first_text":
            self._first_text.append(value)
        elif kind == "error":
            self.errors.appendleft(event)
        for listener in list(self._listeners):
            listener(event)

    def add_tokens(self, model: str, tokens: int) -> None:
        today = self._today()
        if today != self._tokens_day:
            self._tokens, self._tokens_day = Counter(), today
        self._tokens[model] += tokens

    def tokens_today(self) -> dict[str, int]:
        return dict(self._tokens) if self._tokens_day == self._today() else {}

    def _today(self) -> str:
        return datetime.fromtimestamp(self._clock(), UTC).date().isoformat()

    def per_minute(self, kind: str) -> list[int]:
        """Counts of one kind in each of the last WINDOW_MINUTES minutes, oldest first (this minute last)."""
        now = int(self._clock() // 60)
        return [self._minutes.get(m, Counter())[kind] for m in range(now - WINDOW_MINUTES + 1, now + 1)]

    def first_text(self) -> tuple[float | None, float | None]:
        """p50 and p95 of the recent waits for the first visible text (seconds)."""
        samples = list(self._first_text)
        return percentile(samples, 50), percentile(samples, 95)

    def subscribe(self, listener: Listener) -> None:
        self._listeners.add(listener)

    def unsubscribe(self, listener: Listener) -> None:
        self._listeners.discard(listener)
