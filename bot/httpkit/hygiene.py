"""What keeps one client from holding the hub's web server: read deadlines, a connection cap per address,
and the real client address behind a trusted reverse proxy.

A request head must arrive within `header_timeout` of the connection opening (or of the last response on a
kept-alive connection): aiohttp's keep-alive timer closes a connection still waiting for a complete head,
so it is set to that deadline. A body must be complete within `body_timeout` of its head. Each address may
hold `max_connections` at once; a trusted proxy is exempt, and the addresses it forwards for are what the
sign-in throttle counts. X-Forwarded-For and X-Forwarded-Proto are believed only from `trusted_proxies`.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections import Counter
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Limits:
    header_timeout: float = 20.0
    body_timeout: float = 120.0
    max_connections: int = 256
    trusted_proxies: tuple[Network, ...] = ()

    def trusted(self, address: str | None) -> bool:
        try:
            ip = ipaddress.ip_address((address or "").split("%")[0])
        except ValueError:
            return False
        return any(ip in net for net in self.trusted_proxies)


LIMITS = web.AppKey("server_limits", Limits)


def real_client(request: web.Request, limits: Limits) -> tuple[str, str]:
    """(address, scheme) of whoever is behind the trusted proxies: X-Forwarded-For read from the right,
    skipping the proxies' own entries, so a client cannot choose its address by sending the header itself."""
    if not limits.trusted(request.remote):
        return request.remote or "?", request.scheme
    hops = [h.strip() for h in ",".join(request.headers.getall("X-Forwarded-For", [])).split(",") if h.strip()]
    client = next((h for h in reversed(hops) if not limits.trusted(h)), request.remote or "?")
    proto = request.headers.get("X-Forwarded-Proto", "").split(",")[-1].strip().lower()
    return client, proto if proto in ("http", "https") else request.scheme


@web.middleware
async def hygiene(request: web.Request, handler: Handler) -> web.StreamResponse:
    """First in the chain: the forwarded address and scheme, then the body deadline."""
    limits = request.app[LIMITS]
    remote, scheme = real_client(request, limits)
    if (remote, scheme) != (request.remote, request.scheme):
        request = request.clone(remote=remote, scheme=scheme)
    if not request.body_exists or request.content.is_eof():
        return await handler(request)
    timer = asyncio.get_running_loop().call_later(limits.body_timeout, _cut_slow_body, request)
    try:
        return await handler(request)
    finally:
        timer.cancel()


def _cut_slow_body(request: web.Request) -> None:
    if not request.content.is_eof() and request.transport is not None:
        request.transport.close()


class GuardedRunner(web.AppRunner):
    """An AppRunner whose connections pass the per-address cap before aiohttp sees them."""

    def __init__(self, app: web.Application, limits: Limits, **kwargs: Any) -> None:
        super().__init__(app, keepalive_timeout=limits.header_timeout, **kwargs)
        app[LIMITS] = limits
        self._limits = limits
        self._open: Counter[str] = Counter()

    @property
    def server(self) -> Any:  # the protocol factory TCPSite listens with
        inner = super().server
        if inner is None:
            return None
        return lambda: _Capped(inner(), self._open, self._limits)


class _Capped(asyncio.Protocol):
    """aiohttp's protocol for one connection, refused at once when its address holds too many already."""

    def __init__(self, inner: asyncio.Protocol, open_counts: Counter[str], limits: Limits) -> None:
        self._inner, self._open, self._limits = inner, open_counts, limits
        self._address: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if peer else "?"
        if not self._limits.trusted(address) and self._open[address] >= self._limits.max_connections:
            transport.abort()  # type: ignore[attr-defined]
            return
        self._address = address
        self._open[address] += 1
        self._inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._address is None:
            return
        self._open[self._address] -= 1
        if self._open[self._address] <= 0:
            del self._open[self._address]
        self._inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()
