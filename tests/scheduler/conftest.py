"""A clock tests move by hand: the scheduler's sleeps end when the clock passes their target, never in real time."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import datetime, timedelta
from typing import Any


class FakeClock:
    def __init__(self, now: datetime) -> None:
        self._now = now
        self._moved = asyncio.Event()

    def now(self) -> datetime:
        return self._now

    def sleep(self, seconds: float) -> Coroutine[Any, Any, None]:
        """The target is fixed when sleep is called, not when the coroutine first runs: a test that advances
        the clock in between must not push the sleeper's wake-up further out."""
        return self._until(self._now + timedelta(seconds=seconds))

    async def _until(self, target: datetime) -> None:
        while self._now < target:
            await self._moved.wait()

    def advance(self, **delta: float) -> None:
        self._now += timedelta(**delta)
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()
