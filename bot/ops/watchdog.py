"""Restart an adapter whose connection stays down, with exponential backoff between attempts.

SDKs reconnect by themselves after short outages; the watchdog is for the case they give up (a polling
loop that died, a gateway that stopped resuming), which would otherwise leave a platform silent forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Container, Sequence
from dataclasses import dataclass

from bot.adapter import Adapter
from bot.ops.health import is_connected
from bot.ops.metrics import Metrics

log = logging.getLogger("bothub.watchdog")

CHECK_EVERY = 5.0  # seconds between checks
DOWN_GRACE = 30.0  # seconds an adapter may stay disconnected before it is restarted
FIRST_BACKOFF = 5.0
MAX_BACKOFF = 300.0


@dataclass
class _State:
    down_since: float | None = None
    next_attempt: float = 0.0
    backoff: float = 0.0


class Watchdog:
    def __init__(
        self,
        adapters: Sequence[Adapter],
        start_adapter: Callable[[Adapter], Awaitable[None]],
        metrics: Metrics | None = None,
        *,
        check_every: float = CHECK_EVERY,
        down_grace: float = DOWN_GRACE,
        first_backoff: float = FIRST_BACKOFF,
        max_backoff: float = MAX_BACKOFF,
        clock: Callable[[], float] = time.monotonic,
        skip: Container[str] = frozenset(),  # names still being started (by bot/ops/startup.py)
    ) -> None:
        self.adapters = adapters
        self.skip = skip
        self.start_adapter = start_adapter
        self.metrics = metrics
        self.check_every = check_every
        self.down_grace = down_grace
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        self._clock = clock
        self._states: dict[str, _State] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._watch(), name="watchdog")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.check_every)
            await self.check()

    async def check(self) -> None:
        """One pass over the adapters; restarts those down for longer than the grace period."""
        now = self._clock()
        for adapter in [a for a in self.adapters if a.capabilities.restart_when_down and a.name not in self.skip]:
            state = self._states.setdefault(adapter.name, _State())
            if is_connected(adapter):
                if state.down_since is not None:
                    log.info("%s adapter is connected again", adapter.name)
                self._states[adapter.name] = _State()
                continue
            if state.down_since is None:
                state.down_since = now
                log.warning("%s adapter is not connected", adapter.name)
            if now - state.down_since < self.down_grace or now < state.next_attempt:
                continue
            state.backoff = min(self.max_backoff, state.backoff * 2 or self.first_backoff)
            state.next_attempt = now + state.backoff
            await self._restart(adapter, state.backoff)

    async def _restart(self, adapter: Adapter, backoff: float) -> None:
        log.warning("restarting the %s adapter (next attempt in %.0fs if it stays down)", adapter.name, backoff)
        if self.metrics is not None:
            self.metrics.adapter_restarts.labels(adapter.name).inc()
        try:
            await adapter.stop()
        except Exception:
            log.exception("stopping %s before a restart failed; starting it anyway", adapter.name)
        try:
            await self.start_adapter(adapter)
        except Exception:
            log.exception("restarting %s failed", adapter.name)
