"""The sandbox's only way out with `tools.shell_network`: an HTTP proxy that reaches public addresses only.

A sandboxed command has a network namespace of its own with nothing but loopback (netns.py puts this
proxy's listening socket there). It asks for `CONNECT host:port` (TLS, any TCP protocol a client tunnels)
or an absolute `http://` URL; the proxy resolves the name itself, vets every address with the same SSRF
guard as `web_fetch` (bot/httpkit/netguard.py) and connects to exactly the vetted address. So loopback,
private ranges, link-local and metadata addresses stay out of reach, by literal, by DNS name, or by a
redirect (which the client follows with a new request through here). One request per plain-HTTP
connection (`Connection: close`), so a kept-alive connection cannot switch hosts unvetted.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
from dataclasses import dataclass, field

from yarl import URL

from bot.httpkit.netguard import Lookup, PinnedResolver, Refused, system_lookup, vet

log = logging.getLogger("bothub.shell")

HEAD_TIMEOUT = 30.0  # seconds for a client to send its request head
CONNECT_TIMEOUT = 10.0
MAX_HEAD = 32 * 1024
MAX_CONNECTIONS = 64  # open at once, per command
_HOP_HEADERS = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te",
                "trailer", "upgrade"}


@dataclass(frozen=True)
class Policy:
    """Hosts exempt from the address rules (`tools.web_allow_hosts`, shared with web_fetch) and the resolver."""

    allow_hosts: frozenset[str] = frozenset()
    lookup: Lookup = system_lookup


class _Answer(Exception):
    """Ends a request with this status line and text for the client."""

    def __init__(self, status: str, text: str) -> None:
        super().__init__(text)
        self.status = status


@dataclass
class Proxy:
    """Serves one command's connections; `close` ends every one of them with the command."""

    policy: Policy
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    writers: set[asyncio.StreamWriter] = field(default_factory=set)  # both ends of every open connection

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        self.writers.add(writer)
        try:
            if len(self.tasks) > MAX_CONNECTIONS:
                raise _Answer("503 Service Unavailable", f"more than {MAX_CONNECTIONS} connections at once")
            await self._serve(reader, writer)
        except _Answer as e:
            body = f"bothub sandbox proxy: {e}\n".encode()
            writer.write(f"HTTP/1.1 {e.status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
            with contextlib.suppress(OSError):
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
            pass  # the client went away or sent garbage: nothing to answer
        except asyncio.CancelledError:
            pass  # closed with its command; the task ends here (asyncio would log a cancelled handler as an error)
        finally:
            self.tasks.discard(task)
            self.writers.discard(writer)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with asyncio.timeout(HEAD_TIMEOUT):
            head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _Answer("400 Bad Request", "not an HTTP/1 request")
        method, target, version = parts
        tunnel = method.upper() == "CONNECT"
        url = _target(target, tunnel)
        upstream_reader, upstream = await self._open(url)
        self.writers.add(upstream)
        try:
            if tunnel:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.write(_origin_head(method, url, version, lines[1:]))
            await asyncio.gather(_pipe(reader, upstream), _pipe(upstream_reader, writer))
        finally:
            self.writers.discard(upstream)
            upstream.close()

    async def _open(self, url: URL) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Vets the host (resolving it here, never in the sandbox) and connects to a vetted address."""
        resolver = PinnedResolver()
        try:
            await vet(url, self.policy.allow_hosts, resolver, self.policy.lookup)
        except Refused as e:
            log.info("sandbox network: refused %s: %s", url.host, e)
            raise _Answer("403 Forbidden", f"refused: {e}; the sandbox reaches public internet hosts only") from e
        host = url.raw_host or ""
        addresses = [pin["host"] for pin in resolver.pins.get(host, [])] or _literal(host)
        failure: Exception = OSError("no address")
        for address in addresses:
            try:
                async with asyncio.timeout(CONNECT_TIMEOUT):
                    return await asyncio.open_connection(address, url.port)
            except (OSError, TimeoutError) as e:
                failure = e
        raise _Answer("502 Bad Gateway", f"could not connect to {host}: {type(failure).__name__}")

    async def close(self) -> None:
        """Ends every connection with the command: both ends aborted, handlers still resolving cancelled."""
        for writer in list(self.writers):
            writer.transport.abort()
        for task in list(self.tasks):  # any still resolving or connecting
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def _literal(host: str) -> list[str]:
    """An IP literal is vetted but not pinned; a name that pinned nothing is never connected to by name."""
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        raise _Answer("403 Forbidden", f"refused: {host} resolved to no address") from None


def _target(target: str, tunnel: bool) -> URL:
    """`host:port` of a CONNECT, or the absolute http:// URL of a plain request, as a URL to vet."""
    try:
        url = URL(f"https://{target}" if tunnel else target)
    except ValueError as e:
        raise _Answer("400 Bad Request", "the request target is not a valid address") from e
    if tunnel and (url.explicit_port is None or url.path not in ("", "/") or url.user is not None):
        raise _Answer("400 Bad Request", "CONNECT needs host:port")
    if not tunnel and (url.scheme != "http" or not url.host):
        raise _Answer("400 Bad Request", "give an absolute http:// URL, or use CONNECT for https")
    return url


def _origin_head(method: str, url: URL, version: str, headers: list[str]) -> bytes:
    """The request as the origin server expects it: its path only, proxy headers dropped, one request."""
    kept = [line for line in headers if line and line.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
    if not any(line.lower().startswith("host:") for line in kept):
        kept.insert(0, f"Host: {url.raw_authority}")
    target = url.raw_path_qs or "/"
    return "\r\n".join([f"{method} {target} {version}", *kept, "Connection: close", "", ""]).encode("latin-1")


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copies until end of stream, then half-closes the other side (a tunnel may still answer)."""
    try:
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except OSError:
        sink.close()


async def serve(sock: socket.socket, policy: Policy) -> tuple[asyncio.Server, Proxy]:
    """Serves the proxy on a listening socket (made inside the sandbox's network namespace)."""
    proxy = Proxy(policy)
    server = await asyncio.start_server(proxy.handle, sock=sock, limit=MAX_HEAD)
    return server, proxy
