"""Writes that must stay off an answer's path: items gather for a short window, then go to the store in one
operation per batch, in a task of their own, so a burst costs one write and a slow or failing database never
holds up an answer."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
MAX_PENDING = 1000  # items waiting for the database before the oldest are dropped
BATCH_WINDOW = 0.5  # seconds items gather before one write


class BatchWriter(Generic[T]):
    def __init__(self, write: Callable[[list[T]], Awaitable[None]], what: str, log: logging.Logger) -> None:
        self._write_batch, self._what, self._log = write, what, log
        self.pending: deque[T] = deque(maxlen=MAX_PENDING)
        self._writing: list[T] = []  # the batch the store has but may not have committed yet
        self._task: asyncio.Task[None] | None = None
        self._flush = asyncio.Event()  # set: write what is pending without waiting out the window

    def submit(self, item: T) -> None:
        self.pending.append(item)
        if self._task is None or self._task.done():
            # a fresh context: the writer's own log lines belong to no run
            self._task = asyncio.create_task(self._write(), name=f"{self._what.replace(' ', '-')}-writer",
                                             context=contextvars.Context())

    def unwritten(self) -> list[T]:
        """Submitted items the store may not show yet (pending, or in the write under way)."""
        return [*self._writing, *self.pending]

    async def _write(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._flush.wait(), BATCH_WINDOW)
        while self.pending:
            self._writing = list(self.pending)
            self.pending.clear()
            try:
                await self._write_batch(self._writing)
            except Exception:
                self._log.exception("could not store %d %s(s)", len(self._writing), self._what)
            finally:
                self._writing = []

    async def drain(self) -> None:
        """Store every submitted item now and wait until they are (tests; shutdown)."""
        self._flush.set()
        try:
            while self._task is not None and not self._task.done():
                await asyncio.shield(self._task)
        finally:
            self._flush.clear()
