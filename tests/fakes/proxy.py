"""An HTTP proxy on 127.0.0.1 that records what goes through it: CONNECT tunnels (https, wss) and absolute-URI
requests (plain http, ws), as corporate proxies and squid speak them. Optionally it asks for Basic credentials."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True, slots=True)
class Visit:
    method: str  # CONNECT, GET, POST…
    target: str  # host:port for CONNECT, the absolute URI otherwise
    authorization: str | None  # the Proxy-Authorization header, if any


class FakeProxy:
    def __init__(self, credentials: str | None = None) -> None:
        self.credentials = credentials  # "Basic …": anything else is answered 407
        self.visits: list[Visit] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def targets(self) -> list[str]:
        return [v.target for v in self.visits]

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._relay(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """CONNECT: a tunnel. Otherwise each request (a kept-alive connection carries several) is recorded and
        sent on in origin form; the answers flow back as they come."""
        method, target, version, lines = await _read_head(reader)
        upstream: asyncio.StreamWriter | None = None
        answers: asyncio.Task[None] | None = None
        try:
            while True:
                auth = _field(lines, "proxy-authorization")
                self.visits.append(Visit(method, target, auth))
                if self.credentials is not None and auth != self.credentials:
                    writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n"
                                 b"Content-Length: 0\r\nConnection: close\r\n\r\n")
                    await writer.drain()
                    return
                if method == "CONNECT":
                    host, _, port = target.rpartition(":")
                    up_reader, upstream = await asyncio.open_connection(host.strip("[]"), int(port))
                    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    await asyncio.gather(_pipe(reader, upstream), _pipe(up_reader, writer))
                    return
                url = urlsplit(target)
                if upstream is None:
                    up_reader, upstream = await asyncio.open_connection(url.hostname, url.port or 80)
                    answers = asyncio.create_task(_pipe(up_reader, writer))
                kept = [line for line in lines if not line.lower().startswith(("proxy-authorization:",
                                                                               "proxy-connection:"))]
                origin = f"{method} {url.path or '/'}{'?' + url.query if url.query else ''} {version}"
                body = await reader.readexactly(int(_field(lines, "content-length") or 0))
                upstream.write(("\r\n".join([origin, *kept]) + "\r\n\r\n").encode("latin-1") + body)
                if _field(lines, "upgrade"):  # a websocket: from here on, frames both ways
                    await _pipe(reader, upstream)
                    return
                method, target, version, lines = await _read_head(reader)
        finally:
            if answers is not None:
                answers.cancel()
            if upstream is not None:
                upstream.close()


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, str, str, list[str]]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    first, *lines = head.split("\r\n")
    method, target, version = first.split(" ")
    return method, target, version, [line for line in lines if line]


def _field(lines: list[str], name: str) -> str | None:
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip().lower() == name:
            return value.strip()
    return None


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except ConnectionError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.write_eof() if sink.can_write_eof() else sink.close()
