"""An app's access token for a platform's HTTP API: fetched at start, renewed in the background at half its
lifetime, so no call waits for one; after a refusal for a stale token, one caller renews it for all.

Platforms differ only in how a token is fetched (`fetch` returns the token and its lifetime in seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

RETRY_AFTER_FAILURE = 60.0  # seconds before a failed renewal is tried again


class TokenKeeper:
    pause: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)  # the renewer's wait; tests drive it

    def __init__(self, fetch: Callable[[], Awaitable[tuple[str, float]]], name: str,
                 transient: tuple[type[BaseException], ...]) -> None:
        self._fetch = fetch
        self._name = name
        self._transient = transient  # failures a later renewal may get past
        self._token = ""
        self._lock = asyncio.Lock()
        self._renewer: asyncio.Task[None] | None = None

    async def start(self) -> None:
        lifetime = await self._renew()
        self._renewer = asyncio.create_task(self._renew_forever(lifetime), name=f"{self._name}-token")

    async def close(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
        self._renewer = None
        self._token = ""

    async def token(self) -> str:
        if not self._token:
            await self.refresh_after("")
        return self._token

    async def refresh_after(self, stale: str) -> str:
        """Renew unless another caller already replaced the stale token; returns the current one."""
        async with self._lock:
            if self._token == stale:
                await self._renew()
        return self._token

    async def _renew(self) -> float:
        self._token, lifetime = await self._fetch()
        return lifetime

    async def _renew_forever(self, lifetime: float) -> None:
        while True:
            await self.pause(max(lifetime / 2, 1.0))
            try:
                async with self._lock:
                    lifetime = await self._renew()
            except self._transient as e:
                log.warning("%s token renewal failed, retrying soon: %s", self._name, e)
                lifetime = 2 * RETRY_AFTER_FAILURE
