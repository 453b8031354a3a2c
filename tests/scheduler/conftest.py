"""A clock tests move by hand: the scheduler's sleeps end when the clock passes their target, never in real time."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta


class FakeClock:
    def __init__(self, now: datetime) -> None:
        self._now = now
        self._moved = asyncio.Event()

    def now(self) -> datetime:
        return self._now

    async def sleep(self, seconds: float) -> None:
        target = self._now + timedelta(seconds=seconds)
        while self._now < target:
            await self._moved.wait()

    def advance(self, **delta: float) -> None:
        self._now += timedelta(**delta)
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()
