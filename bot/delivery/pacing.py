"""Budgets that keep the bot inside each platform's flood limits instead of provoking 429s.

Per chat: a token bucket (a burst, then a steady rate). Over all chats, and for new messages into one
group (or any one chat): sliding windows ("at most N in any T seconds"), the shape those limits have. A window counts a
call from when it is made until a full window after it *completed*: the platform saw it somewhere in
between, so requests that bunch up in transit can never push it over: a window one process spends is used to
its limit (a forum group's twentieth answer of a minute is not held for the next minute). A chat's bucket, for
the same reason, refills only while none of its calls is in flight.

Where a platform limits sends or edits per method (a method tier per workspace, an API's calls per second per
app), new messages also count against a sends window and edits against an edits window; a partial first
message promises its stream's final edit, so intermediate updates are made only while every promised final
still has room, and under pressure answers go out whole instead.

The platform-wide window is one bot's, whatever the number of replicas sending for it: each replica allows
itself an equal part of it less a margin (the live replicas are counted once a second): the reserve that
covers the second in which a joining replica is not counted by all yet.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from bot.adapter import Capabilities
from bot.messages import ButtonPress, ChatRef, Interaction

SAFETY = 0.9  # of a window shared by replicas, the fraction they allow themselves together
PROMISE_KEPT = 2.0  # windows after which a promised final edit is no longer reserved (its stream ended otherwise)


class Budget(Protocol):
    @property
    def capacity(self) -> float: ...

    def available(self, now: float) -> float: ...
    def wait_time(self, now: float) -> float: ...
    def take(self, now: float) -> None: ...
    def release(self, now: float) -> None: ...
    def penalize(self, seconds: float, now: float) -> None: ...


class Promises:
    """The finals that partial messages still streaming have promised; one that is `keep` seconds old is no longer
    reserved (its stream ended otherwise)."""

    def __init__(self, keep: float) -> None:
        self._keep = keep
        self._made: deque[float] = deque()

    def count(self, now: float) -> int:
        while self._made and now - self._made[0] > self._keep:
            self._made.popleft()
        return len(self._made)

    def make(self, now: float) -> None:
        self._made.append(now)

    def keep(self) -> None:
        if self._made:
            self._made.popleft()


class Bucket:
    """A chat's burst and steady rate. It refills only while none of the chat's calls is in flight: the platform
    saw each call somewhere before it completed, so counted this way the calls can never arrive closer than the
    rate allows, and the bucket keeps the platform's own rate (a network's round trip is its margin)."""

    def __init__(self, capacity: float, rate: float) -> None:
        self.capacity = capacity
        self.rate = rate
        self._tokens = capacity
        self._stamp = time.monotonic()
        self._in_flight = 0
        self.promises = Promises(PROMISE_KEPT * capacity / self.rate)  # the chat's streams' final edits

    def available(self, now: float) -> float:
        # `now` may predate this bucket (taken before it was created): never count negative time
        if not self._in_flight:
            self._tokens = min(self.capacity, self._tokens + max(0.0, now - self._stamp) * self.rate)
        self._stamp = max(self._stamp, now)
        return self._tokens

    def wait_time(self, now: float) -> float:
        tokens = self.available(now)
        if tokens >= 1:
            return 0.0
        return 0.05 if self._in_flight else (1 - tokens) / self.rate  # in flight: check back once it may be done

    def take(self, now: float) -> None:
        self.available(now)
        self._tokens -= 1
        self._in_flight += 1

    def release(self, now: float) -> None:
        self.available(now)
        self._in_flight -= 1

    def penalize(self, seconds: float, now: float) -> None:
        """The platform said 429: spend what is left and wait `seconds` more."""
        self._tokens = min(self.available(now), 0.0) - seconds * self.rate


def alone() -> int:
    return 1


class Window:
    def __init__(self, limit: int, seconds: float, sharers: Callable[[], int] = alone) -> None:
        self._limit = limit
        self._sharers = sharers  # how many replicas spend this window between them
        self.seconds = seconds
        self._done: deque[float] = deque()  # completion times of recent calls
        self._in_flight = 0
        self._blocked_until = 0.0

    @property
    def capacity(self) -> float:
        sharers = max(1, self._sharers())
        return float(max(1, int(self._limit * (SAFETY if sharers > 1 else 1.0) / sharers)))

    def available(self, now: float) -> float:
        while self._done and now - self._done[0] >= self.seconds:
            self._done.popleft()
        return 0.0 if now < self._blocked_until else self.capacity - len(self._done) - self._in_flight

    def wait_time(self, now: float) -> float:
        if now < self._blocked_until:
            return self._blocked_until - now
        if self.available(now) >= 1:
            return 0.0
        # with every slot in flight, check back shortly; otherwise when the oldest completion expires
        return self._done[0] + self.seconds - now if self._done else 0.05

    def take(self, now: float) -> None:
        self._in_flight += 1

    def release(self, now: float) -> None:
        self._in_flight -= 1
        self._done.append(now)

    def penalize(self, seconds: float, now: float) -> None:
        self._blocked_until = max(self._blocked_until, now + seconds)


class Edits(Window):
    """The edits window, and the final edits promised by partial first messages still streaming."""

    def __init__(self, limit: int, seconds: float, sharers: Callable[[], int] = alone) -> None:
        super().__init__(limit, seconds, sharers)
        self.promises = Promises(PROMISE_KEPT * seconds)

    def spare(self, now: float) -> float:
        """Edits available beyond the finals promised."""
        return self.available(now) - self.promises.count(now)


class Pacer:
    """Per-chat and platform-wide budgets. Intermediate edits use `try_take`, final sends `take`."""

    def __init__(self, caps: Capabilities, replicas: Callable[[], int] = alone) -> None:
        self._caps = caps
        self._chats: dict[tuple[str, str | None], Bucket] = {}
        # new messages into one group, or into any one chat: a chat is one replica's, so these are not shared
        self._sends_into: dict[tuple[str, str, str | None], Window] = {}
        self._finals: dict[tuple[str, str | None], deque[float]] = {}  # when each chat's recent finals were sent
        self._global = Window(*caps.global_window, replicas)
        self._edits = Edits(*caps.edit_window, replicas) if caps.edit_window is not None else None
        self._sends = Window(*caps.send_window, replicas) if caps.send_window is not None else None

    def _bucket(self, key: tuple[str, str | None]) -> Bucket:
        bucket = self._chats.get(key)
        if bucket is None:
            bucket = self._chats[key] = Bucket(self._caps.burst, self._caps.rate)
        return bucket

    def _budgets(self, chat: ChatRef, new_message: bool) -> list[Budget]:
        key = self._key(chat)
        budgets: list[Budget] = [self._global, self._bucket(key)]
        if new_message:
            rules = (("group", self._caps.group_send_window if chat.is_group else None),
                     ("chat", self._caps.chat_send_window))
            for rule, limit in rules:
                if limit is not None:
                    window = self._sends_into.get((rule, *key))
                    if window is None:
                        window = self._sends_into[(rule, *key)] = Window(*limit)
                    budgets.append(window)
        if not new_message and self._edits is not None:
            budgets.append(self._edits)
        if new_message and self._sends is not None:
            budgets.append(self._sends)
        return budgets

    def _key(self, chat: ChatRef) -> tuple[str, str | None]:
        """Whose flood limit a call counts against: the chat's, a thread's, or an interaction's own."""
        origin = chat.origin
        if self._caps.interactions_paced_apart and isinstance(origin, Interaction):
            return chat.chat_id, f"interaction:{origin.interaction_id}"
        if self._caps.interactions_paced_apart and isinstance(origin, ButtonPress):
            return chat.chat_id, f"interaction:{origin.press_id}"
        # a thread shares its chat's flood limit unless the platform counts it as a channel of its own
        return chat.chat_id, chat.thread_id if self._caps.threads_paced_apart else None

    def busy(self, chat: ChatRef) -> bool:
        """Whether a partial message now would spend what the chat's next answers need: its budget cannot pay for
        a partial and a final beyond the finals promised, or its answers alone came near its limit (as many in the
        time the budget takes to refill as the burst less one): a forum's topics, a group asked every second."""
        key, now = self._key(chat), time.monotonic()
        bucket = self._bucket(key)
        if bucket.available(now) - bucket.promises.count(now) < 1 + min(1, bucket.capacity - 1):
            return True
        finals = self._finals.get(key)
        if finals is None:
            return False
        while finals and now - finals[0] > self.refill(chat):
            finals.popleft()
        if not finals:
            del self._finals[key]
        return len(finals) >= bucket.capacity - 1

    def refill(self, chat: ChatRef) -> float:
        """Seconds the chat's budget takes to refill from empty."""
        bucket = self._bucket(self._key(chat))
        return bucket.capacity / bucket.rate

    def try_take(self, chat: ChatRef, new_message: bool = False, reserve: float = 1.0) -> Slot | None:
        """A slot only if `reserve` more stay available: intermediate stream updates must never spend
        the budget a final answer needs. A partial new message (which will need a final edit) needs room for it
        beyond the finals already promised in the chat (another topic's stream in a forum) and, with an edits
        window, in that window; an intermediate edit `reserve` more (its own final)."""
        now = time.monotonic()
        budgets = self._budgets(chat, new_message)
        if any(b.available(now) < 1 + min(reserve, b.capacity - 1) for b in budgets):
            return None
        bucket = self._bucket(self._key(chat))
        if new_message and bucket.available(now) - bucket.promises.count(now) < 1 + min(reserve, bucket.capacity - 1):
            return None
        if self._edits is not None and self._edits.spare(now) < 1 + (0.0 if new_message else reserve):
            return None
        if new_message:
            bucket.promises.make(now)
            if self._edits is not None:
                self._edits.promises.make(now)
        return Slot(budgets, now)

    async def take(self, chat: ChatRef, new_message: bool = False) -> Slot:
        """Wait for a slot; release it when the call has completed."""
        while True:
            now = time.monotonic()
            budgets = self._budgets(chat, new_message)
            wait = max(b.wait_time(now) for b in budgets)
            if wait <= 0:
                key = self._key(chat)
                self._finals.setdefault(key, deque()).append(now)
                if not new_message:  # a final edit: the promise of its partial message is kept
                    self._bucket(key).promises.keep()
                    if self._edits is not None:
                        self._edits.promises.keep()
                return Slot(budgets, now)
            await asyncio.sleep(wait)

    def withdraw(self, chat: ChatRef) -> None:
        """A partial message that could not be sent after all: it promises no final edit."""
        self._bucket(self._key(chat)).promises.keep()
        if self._edits is not None:
            self._edits.promises.keep()

    def penalize(self, chat: ChatRef, seconds: float) -> None:
        now = time.monotonic()
        for b in self._budgets(chat, False):
            if b not in (self._global, self._edits, self._sends):  # a 429 says the chat is short, not the method
                b.penalize(seconds, now)


class Slot:
    """One platform call's share of every budget it counts against; `release()` when the call is done."""

    def __init__(self, budgets: list[Budget], now: float) -> None:
        self._budgets = budgets
        for b in budgets:
            b.take(now)

    def release(self) -> None:
        now = time.monotonic()
        for b in self._budgets:
            b.release(now)
        self._budgets = []
