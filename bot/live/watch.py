"""Every replica follows the fleet in the store: a change made anywhere (the CLI, `bothub apply`, another
replica, the dashboard) is in force here at once where the store notifies (PostgreSQL: NOTIFY at commit), else at
the next look, at most `fleet.poll` seconds later. A look is one tiny query (the latest change's id); only a new
id reloads the catalog."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from bot.fleet.catalog import Catalog
from bot.fleet.service import Fleet

log = logging.getLogger("bothub.fleet")


class FleetWatch:
    def __init__(self, fleet: Fleet, apply: Callable[[Catalog], Awaitable[None]], poll: float) -> None:
        self._fleet = fleet
        self._apply = apply
        self._poll = poll
        self.version = -1  # none applied yet
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._unlisten: Callable[[], Awaitable[None]] | None = None

    async def load(self) -> None:
        """Apply the current catalog now (at start-up, before the adapters start)."""
        catalog = await self._fleet.load()
        await self._apply(catalog)
        self.version = catalog.version

    async def start(self) -> None:
        """Follow the store: woken by its notifications where it has them, and every `poll` seconds."""
        self._unlisten = await self._fleet.store.listen(self.poke)
        self._task = asyncio.create_task(self._follow(), name="fleet-watch")

    def poke(self) -> None:
        """Look now (a change made in this process)."""
        self._wake.set()

    async def _follow(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._poll):
                    await self._wake.wait()
            self._wake.clear()
            try:
                if await self._fleet.store.version() != self.version:
                    await self.load()
            except Exception:  # a bad change or a store hiccup: logged, tried again at the next look
                log.exception("applying fleet changes failed")

    async def stop(self) -> None:
        if self._unlisten is not None:
            await self._unlisten()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
