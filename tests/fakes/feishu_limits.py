"""Feishu's published frequency limits for the fake open platform, off unless a test or benchmark sets them.

Per app, each message API allows 50 calls a second; sending (or replying) into one chat 5 a second; updating
one message 5 a second; one CardKit card 10 operations a second. A call over a limit is refused with HTTP 429,
code 99991400 and the x-ogw-ratelimit-* headers, and changes nothing. Windows slide over the last second.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable

APP_PER_SECOND = 50
CHAT_PER_SECOND = 5
MESSAGE_UPDATES_PER_SECOND = 5
CARD_PER_SECOND = 10


class FeishuLimits:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.causes: dict[str, int] = defaultdict(int)  # which limit refused how many calls
        self._windows: dict[tuple[str, str], deque[float]] = defaultdict(deque)

    def allow(self, api: str, target: str | None) -> bool:
        """Spend one call of `api` ("send", "update" or "cardkit") on `target` (a chat, message or card)."""
        return self.refusal(api, target) is None

    def refusal(self, api: str, target: str | None) -> str | None:
        """Like `allow`, naming the rule that refuses the call (None: allowed, and spent)."""
        now = self.clock()
        keys = [(f"{api} per app", "")] + ([] if target is None else [(self._scope(api), target)])
        windows = [self._windows[key] for key in keys]
        for (rule, _), window in zip(keys, windows, strict=True):
            while window and window[0] <= now - 1.0:
                window.popleft()
            if len(window) >= self._limit(rule):
                self.causes[rule] += 1
                return rule
        for window in windows:
            window.append(now)
        return None

    @staticmethod
    def _scope(api: str) -> str:
        return {"send": "send per chat", "update": "update per message", "cardkit": "cardkit per card"}[api]

    @staticmethod
    def _limit(rule: str) -> int:
        if rule.endswith("per app"):
            return APP_PER_SECOND
        return {"send per chat": CHAT_PER_SECOND, "update per message": MESSAGE_UPDATES_PER_SECOND,
                "cardkit per card": CARD_PER_SECOND}[rule]
