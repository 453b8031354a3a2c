"""Starting the platforms: one that cannot be reached is named in one line and retried in the background.

A platform that refuses the credentials (a ConfigError) cannot run until someone fixes them, so it is
not retried; start-up fails only when every platform is in that state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from bot.adapter import Adapter
from bot.config import ConfigError

log = logging.getLogger("bothub.startup")

FIRST_RETRY = 1.0  # seconds; doubled after each failure
MAX_RETRY = 60.0


class Starter:
    def __init__(self, start_adapter: Callable[[Adapter], Awaitable[None]], *,
                 first_retry: float = FIRST_RETRY, max_retry: float = MAX_RETRY) -> None:
        self._start = start_adapter
        self._first, self._max = first_retry, max_retry
        self.retrying: set[str] = set()  # adapters not up yet: the watchdog leaves them to us
        self._tasks: set[asyncio.Task[None]] = set()

    async def start_all(self, adapters: Sequence[Adapter]) -> None:
        """Start every adapter, all at once (each mostly waits on its platform's handshake: start-up takes the
        slowest one's time, not their sum); raises ConfigError only when none of them can run."""
        refused = [name for name in await asyncio.gather(*(self._first_start(a) for a in adapters)) if name]
        if adapters and len(refused) == len(adapters):
            raise ConfigError("no platform can run (" + ", ".join(refused) + ")")

    async def _first_start(self, adapter: Adapter) -> str | None:
        """The adapter's name when it refused the credentials; an unreachable one is retried in the background."""
        try:
            await self._start(adapter)
        except ConfigError as e:
            log.error("%s cannot run: %s", adapter.name, e)
            return adapter.name
        except Exception as e:
            log.error("%s: %s; retrying in %.0f s", adapter.name, cause(e), self._first)
            log.debug("%s start-up failure", adapter.name, exc_info=True)
            self.retrying.add(adapter.name)
            task = asyncio.create_task(self._keep_trying(adapter), name=f"start-{adapter.name}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return None

    async def _keep_trying(self, adapter: Adapter) -> None:
        delay = self._first
        try:
            while True:
                await asyncio.sleep(delay)
                with contextlib.suppress(Exception):
                    await adapter.stop()  # whatever the failed attempt left half-open
                try:
                    await self._start(adapter)
                except ConfigError as e:
                    log.error("%s cannot run: %s", adapter.name, e)
                    return
                except Exception as e:
                    delay = min(self._max, delay * 2)
                    log.warning("%s: %s; retrying in %.0f s", adapter.name, cause(e), delay)
                else:
                    log.info("%s is up", adapter.name)
                    return
        finally:
            self.retrying.discard(adapter.name)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def cause(error: BaseException) -> str:
    """The error in one line: its own words, else its type, with the underlying cause when there is one."""
    text = str(error) or type(error).__name__
    inner = error.__cause__ or error.__context__
    if inner is not None and str(inner) and str(inner) not in text:
        text += f" ({inner})"
    return " ".join(text.split())
