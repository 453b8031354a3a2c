"""A small HTTP/1.1 client for the model provider: one endpoint, requests with a body of known length, answers
streamed as they arrive, connections kept alive between requests.

aiohttp's client spent ≈ 0.85 ms of the event loop per streamed request (request, URL and header objects, socket
set-up in Python for happy eyeballs, trace hooks, its stream reader) where the loop's own transport needs ≈ 0.45 ms;
a thousand answers starting at once wait behind that before their requests are out. The provider's API needs
little of HTTP: no redirects or cookies, no compression (none is asked for), answers framed by Content-Length,
chunked transfer or the connection's end, TLS with the system's trust store, an HTTP proxy (bot/agent/proxied.py).
"""

from __future__ import annotations

import asyncio
import collections
import ssl
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import cast
from urllib.parse import urlsplit

from bot.agent.proxied import Proxy

MAX_HEAD = 64 * 1024  # status line and headers
MAX_LINE = 8 * 1024  # a chunk-size line or a trailer
BUFFER_HIGH = 1024 * 1024  # stop reading the socket while this much waits to be consumed
KEEP_IDLE = 15.0  # seconds an unused connection is kept (servers drop theirs after 5–60 s)


class ProtocolError(ConnectionError):
    """The server broke HTTP/1.1 (a malformed status line, header or chunk), or closed the connection mid-answer."""


class ProxyRefused(ConnectionError):
    """The proxy answered CONNECT with something other than 200 (407: it wants credentials)."""


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection: bytes in a buffer, read with a deadline of silence."""

    def __init__(self, silence: float) -> None:
        self.silence = silence  # the longest wait for the next bytes
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._eof = False
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports do not subclass asyncio's

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if len(self._buffer) > BUFFER_HIGH and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof, self._error = True, exc
        self._wake()
        if self._drained is not None and not self._drained.done():
            self._drained.set_exception(exc or ConnectionResetError("connection closed while sending"))

    def pause_writing(self) -> None:
        self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        self._drained = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    @property
    def usable(self) -> bool:
        return not self._eof and not self._buffer and self.transport is not None and not self.transport.is_closing()

    @property
    def received_nothing(self) -> bool:
        return not self._buffer

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def consume(self, expected: bytes) -> bool:
        """Take `expected` if it is exactly what is left in the buffer."""
        if self._buffer != expected:
            return False
        self._buffer.clear()
        return True

    async def send(self, *parts: bytes) -> None:
        """Write `parts` as they are: a request's head and body go out without being joined into a third copy."""
        assert self.transport is not None
        self.transport.writelines(parts)
        if self._drained is not None:
            await self._drained

    async def _fill(self) -> None:
        """Wait for more bytes; ProtocolError at the connection's end, TimeoutError after `silence` seconds."""
        if self._eof:
            raise ProtocolError(f"the server closed the connection ({self._error or 'end of stream'})")
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(self.silence):
                await self._waiter
        finally:
            self._waiter = None

    def _take(self, n: int) -> bytes:
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        if self._paused and len(self._buffer) <= BUFFER_HIGH // 4 and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return data

    async def until(self, mark: bytes, limit: int) -> bytes:
        """The bytes up to `mark` (which is consumed, not returned)."""
        start = 0
        while (at := self._buffer.find(mark, start)) < 0:
            if len(self._buffer) > limit:
                raise ProtocolError("a line or header block too long")
            start = max(0, len(self._buffer) - len(mark) + 1)
            await self._fill()
        if at > limit:
            raise ProtocolError("a line or header block too long")
        data = self._take(at)
        del self._buffer[:len(mark)]
        return data

    async def some(self, at_most: int, *, end_ok: bool = False) -> bytes:
        """What has arrived, up to `at_most` bytes; b"" at the connection's end when `end_ok`."""
        while not self._buffer:
            if self._eof and end_ok:
                return b""
            await self._fill()
        return self._take(at_most)


class Response:
    """A response whose head has arrived; the body is read as it comes, once. `release()` gives the connection
    back for the next request when the body was read to its end, and closes it otherwise."""

    def __init__(self, client: Client, conn: _Connection, status: int, reason: str, headers: dict[str, str],
                 keep_alive: bool) -> None:
        self.status, self.reason, self.headers = status, reason, headers
        self._client, self._conn = client, conn
        self._keep_alive = keep_alive
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        self._left = 0  # bytes of the current chunk not read yet
        self._complete = False
        self._released = False

    async def iter_any(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive."""
        conn, headers = self._conn, self.headers
        if self.status in (204, 304):
            pass
        elif self._chunked:
            while size := _chunk_size(await conn.until(b"\r\n", MAX_LINE)):
                self._left = size
                while self._left:
                    piece = await conn.some(self._left)
                    self._left -= len(piece)
                    yield piece
                if await conn.until(b"\r\n", MAX_LINE):
                    raise ProtocolError("a chunk longer than its size")
            while await conn.until(b"\r\n", MAX_LINE):
                pass  # trailers: nothing here reads them
        elif (length := headers.get("content-length")) is not None:
            left = _content_length(length)
            while left:
                piece = await conn.some(left)
                left -= len(piece)
                yield piece
        else:  # the body ends with the connection
            self._keep_alive = False
            while piece := await conn.some(BUFFER_HIGH, end_ok=True):
                yield piece
        self._complete = True

    async def read(self) -> bytes:
        return b"".join([piece async for piece in self.iter_any()])

    async def text(self) -> str:
        return (await self.read()).decode("utf-8", "replace")

    def release(self) -> None:
        """A stream read up to its last event (`data: [DONE]`) usually has only the chunked end left, already
        here: taken, the connection is kept, and the next request skips a TCP and TLS handshake."""
        if self._released:
            return
        self._released = True
        if not self._complete and self._chunked and not self._left:
            self._complete = self._conn.consume(b"\r\n0\r\n\r\n")
        if self._complete and self._keep_alive:
            self._client.keep(self._conn)
        else:
            self._conn.close()


class Client:
    """Requests to one base URL (`https://host[:port]/prefix`), with the same headers on each, directly or through
    an http:// `proxy`."""

    def __init__(self, base_url: str, headers: Mapping[str, str], connect_timeout: float, read_timeout: float,
                 proxy: str | None = None) -> None:
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self._host, self._prefix = url.hostname, url.path.rstrip("/")
        self._port = url.port or (443 if url.scheme == "https" else 80)
        self._tls = ssl.create_default_context() if url.scheme == "https" else None
        self._proxy = Proxy.parse(proxy) if proxy else None
        default_port = self._port == (443 if self._tls else 80)
        host = f"[{self._host}]" if ":" in self._host else self._host
        authority = host if default_port else f"{host}:{self._port}"
        fixed = {"Host": authority, **headers}
        if any(c in f"{k}{v}" for k, v in fixed.items() for c in "\r\n"):
            raise ValueError("a header name or value with a line break")
        # Encoded once: a value HTTP cannot carry (beyond Latin-1) is a ValueError here, at start, not per request.
        self._head = "".join(f"{k}: {v}\r\n" for k, v in fixed.items()).encode("latin-1")
        if self._proxy is not None and self._tls is None:  # plain http: the proxy is asked for the absolute URI
            self._prefix = f"http://{authority}{self._prefix}"
            self._head += self._proxy.header_lines().encode("latin-1")
        self.connect_timeout, self.read_timeout = connect_timeout, read_timeout
        self._idle: collections.deque[tuple[float, _Connection]] = collections.deque()  # newest on the right

    async def request(self, method: str, path: str, body: bytes = b"", content_type: str | None = None) -> Response:
        """Send a request and read the response's head. A kept-alive connection the server has dropped meanwhile
        (nothing came back at all) is closed and the request goes on the next one, or a new one: the server never
        saw it."""
        typed = f"Content-Type: {content_type}\r\n" if content_type is not None else ""
        head = b"".join((f"{method} {self._prefix}{path} HTTP/1.1\r\n".encode(), self._head,
                         f"{typed}Content-Length: {len(body)}\r\n\r\n".encode()))
        while (conn := self._reuse()) is not None:
            try:
                return await self._exchange(conn, head, body)
            except ConnectionError:
                conn.close()
                if not conn.received_nothing:
                    raise
        return await self._exchange(await self._connect(), head, body)

    async def _exchange(self, conn: _Connection, head: bytes, body: bytes) -> Response:
        try:
            await conn.send(head, body)
            status, reason, headers, keep_alive = _parse_head(await conn.until(b"\r\n\r\n", MAX_HEAD))
        except BaseException:
            conn.close()
            raise
        return Response(self, conn, status, reason, headers, keep_alive)

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self.connect_timeout):
            if self._proxy is None:
                _, conn = await loop.create_connection(lambda: _Connection(self.read_timeout), self._host,
                                                       self._port, ssl=self._tls)
                return conn
            _, conn = await loop.create_connection(lambda: _Connection(self.read_timeout), self._proxy.host,
                                                   self._proxy.port)
            if self._tls is not None:
                await self._tunnel(conn, self._proxy)
        return conn

    async def _tunnel(self, conn: _Connection, proxy: Proxy) -> None:
        """CONNECT through the proxy, then TLS with the model's host inside the tunnel."""
        try:
            await conn.send(proxy.connect_request(self._host, self._port))
            status, reason, _, _ = _parse_head(await conn.until(b"\r\n\r\n", MAX_HEAD))
            if status != 200:
                raise ProxyRefused(f"the proxy refused the tunnel to {self._host}:{self._port}: {status} {reason}")
            assert conn.transport is not None and self._tls is not None
            conn.transport = cast(asyncio.Transport, await asyncio.get_running_loop().start_tls(
                conn.transport, conn, self._tls, server_hostname=self._host))
        except BaseException:
            conn.close()
            raise

    def _reuse(self) -> _Connection | None:
        self._expire()
        while self._idle:
            _, conn = self._idle.pop()
            if conn.usable:
                return conn
            conn.close()
        return None

    def keep(self, conn: _Connection) -> None:
        if conn.usable:
            self._idle.append((time.monotonic(), conn))
        else:
            conn.close()
        self._expire()

    def _expire(self) -> None:
        deadline = time.monotonic() - KEEP_IDLE
        while self._idle and self._idle[0][0] < deadline:
            self._idle.popleft()[1].close()

    def close(self) -> None:
        while self._idle:
            self._idle.pop()[1].close()


def _parse_head(head: bytes) -> tuple[int, str, dict[str, str], bool]:
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise ProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise ProtocolError(f"a malformed header line: {line[:80]!r}")
        key = name.lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    if int(code) < 200:
        raise ProtocolError(f"an interim response ({code}) to a request that asked for none")
    keep_alive = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
    return int(code), reason, headers, keep_alive


def _chunk_size(line: bytes) -> int:
    try:
        return int(line.split(b";", 1)[0].strip(), 16)
    except ValueError:
        raise ProtocolError(f"a malformed chunk size: {line[:40]!r}") from None


def _content_length(value: str) -> int:
    if not value.isdigit():
        raise ProtocolError(f"a malformed Content-Length: {value[:40]!r}")
    return int(value)


def multipart(fields: Mapping[str, str], file_field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body with text fields and one file; returns the body and its Content-Type."""
    boundary = uuid.uuid4().hex
    safe_name = filename.replace("\\", "\\\\").replace('"', '\\"').replace("\r", " ").replace("\n", " ")
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
             for name, value in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{safe_name}"\r\n'
                 "Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"
