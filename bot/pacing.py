"""Token buckets that keep the bot inside each platform's flood limits instead of provoking 429s."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from bot.adapter import Capabilities
from bot.messages import ChatRef


@dataclass
class Bucket:
    capacity: float
    rate: float  # tokens per second
    tokens: float = -1.0
    stamp: float = 0.0

    def _refill(self, now: float) -> None:
        if self.tokens < 0:
            self.tokens, self.stamp = self.capacity, now
            return
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_time(self, now: float) -> float:
        self._refill(now)
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def take(self) -> None:
        self.tokens -= 1

    def penalize(self, seconds: float, now: float) -> None:
        """The platform said 429: spend what is left and wait `seconds` more."""
        self._refill(now)
        self.tokens = min(self.tokens, 0.0) - seconds * self.rate


class Pacer:
    """Per-chat (and per-platform) budgets. Intermediate edits use `try_take`, final sends `take`."""

    def __init__(self, caps: Capabilities) -> None:
        self._caps = caps
        self._chats: dict[tuple[str, str | None], Bucket] = {}
        self._group_sends: dict[str, Bucket] = {}
        self._global = Bucket(caps.global_rate, caps.global_rate)

    def _buckets(self, chat: ChatRef, new_message: bool) -> list[Bucket]:
        key = (chat.chat_id, chat.thread_id)
        buckets = [self._global]
        bucket = self._chats.get(key)
        if bucket is None:
            bucket = self._chats[key] = Bucket(self._caps.burst, self._caps.rate)
        buckets.append(bucket)
        if new_message and chat.is_group:
            group = self._group_sends.get(chat.chat_id)
            if group is None:
                group = self._group_sends[chat.chat_id] = Bucket(
                    self._caps.group_send_burst, self._caps.group_send_rate
                )
            buckets.append(group)
        return buckets

    def try_take(self, chat: ChatRef, new_message: bool = False, reserve: float = 1.0) -> bool:
        """Take a token only if `reserve` more stay available: intermediate stream updates must never
        spend the budget a final answer needs."""
        now = time.monotonic()
        buckets = self._buckets(chat, new_message)
        if any(b.wait_time(now) > 0 or b.tokens < 1 + min(reserve, b.capacity - 1) for b in buckets):
            return False
        for b in buckets:
            b.take()
        return True

    async def take(self, chat: ChatRef, new_message: bool = False) -> None:
        while True:
            now = time.monotonic()
            buckets = self._buckets(chat, new_message)
            wait = max(b.wait_time(now) for b in buckets)
            if wait <= 0:
                for b in buckets:
                    b.take()
                return
            await asyncio.sleep(wait)

    def penalize(self, chat: ChatRef, seconds: float) -> None:
        now = time.monotonic()
        for b in self._buckets(chat, False):
            if b is not self._global:
                b.penalize(seconds, now)
