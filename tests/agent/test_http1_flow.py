"""The HTTP/1.1 client's flow control and connection pool: big bodies both ways, heads too long, kept connections
that break, expire or carry stray bytes — against small socket servers written for each case."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from bot.agent import http1
from bot.agent.http1 import Client, ProtocolError
from tests.agent.test_http1 import RawServer, client, serving
from tests.harness import wait_for

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
BIG = 32 * 1024 * 1024  # well beyond what the kernel buffers on loopback, both ways
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


@asynccontextmanager
async def listening(handler: Handler) -> AsyncIterator[int]:
    listener = await asyncio.start_server(handler, "127.0.0.1", 0)
    try:
        yield listener.sockets[0].getsockname()[1]
    finally:
        listener.close()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.startswith(b"Content-Length:"))
    return await reader.readexactly(length)


async def test_a_body_not_read_yet_stops_the_socket_being_read_rather_than_filling_memory() -> None:
    written = asyncio.Event()

    async def blast(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % BIG + b"x" * BIG)
        await writer.drain()
        written.set()
        await reader.read()  # until the client hangs up
        writer.close()

    async with listening(blast) as port:
        http = client(port)
        response = await http.request("GET", "/files/big")
        await asyncio.sleep(0.5)
        assert not written.is_set()  # the client stopped reading at its buffer's limit: the server has to wait
        received = 0
        async for piece in response.iter_any():
            received += len(piece)
        assert received == BIG and written.is_set()
        response.release()
        http.close()


async def test_a_big_upload_waits_for_the_server_to_take_it_and_arrives_whole() -> None:
    got: list[int] = []

    async def slow_reader(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.3)  # the client's send buffer fills meanwhile
        got.append(len(await read_request(reader)))
        writer.write(OK)
        await writer.drain()
        writer.close()

    async with listening(slow_reader) as port:
        response = await client(port).request("POST", "/audio/transcriptions", b"a" * BIG, "audio/ogg")
        assert await response.read() == b"ok"
        response.release()
    assert got == [BIG]


async def test_a_server_that_hangs_up_during_a_big_upload_fails_the_request_instead_of_hanging_it() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readexactly(1024)
        writer.transport.abort()  # unread bytes left: the kernel resets the connection

    async with listening(hang_up) as port:
        with pytest.raises(ConnectionError):
            async with asyncio.timeout(10):
                await client(port).request("POST", "/audio/transcriptions", b"a" * BIG, "audio/ogg")


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\n" + b"X-Big: " + b"y" * (70 * 1024),  # no end of the head in sight
    b"HTTP/1.1 200 OK\r\n" + b"X-Big: " + b"y" * (70 * 1024) + b"\r\n\r\n",  # an end, too far away
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"0" * (9 * 1024) + b"1\r\n",  # a chunk-size line
], ids=["unended-head", "long-head", "long-chunk-line"])
async def test_heads_and_lines_beyond_their_limits_are_protocol_errors(answer: bytes) -> None:
    async def answer_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer)
        await writer.drain()
        await reader.read()
        writer.close()

    async with listening(answer_at_once) as port:
        with pytest.raises(ProtocolError, match="too long"):
            response = await client(port).request("GET", "/models")
            try:
                await response.read()
            finally:
                response.release()  # closes the connection the answer broke


class DropsSecondRequest(RawServer):
    """Answers the first request of its first connection, then reads the second and hangs up, without (or after
    half of) an answer; every later connection answers normally."""

    def __init__(self, half_answer: bytes = b"") -> None:
        super().__init__([OK, OK])
        self.half_answer = half_answer

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.connections:
            return await super().handle(reader, writer)
        self.connections += 1
        for answer in (OK, self.half_answer):
            self.requests.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(answer)
            await writer.drain()
        writer.close()


async def test_a_kept_connection_that_hangs_up_before_answering_is_replaced_for_the_same_request() -> None:
    server = DropsSecondRequest()
    async with serving(server) as port:
        http = client(port)
        for _ in range(2):
            response = await http.request("GET", "/models")
            assert await response.read() == b"ok"
            response.release()
        http.close()
    assert server.connections == 2 and len(server.requests) == 3  # the second went again, on a new connection


async def test_a_kept_connection_that_breaks_off_an_answer_fails_the_request_without_sending_it_again() -> None:
    server = DropsSecondRequest(half_answer=b"HTTP/1.1 200 OK\r\nContent-")
    async with serving(server) as port:
        http = client(port)
        first = await http.request("POST", "/chat/completions", b"{}")
        assert await first.read() == b"ok"
        first.release()
        with pytest.raises(ProtocolError):
            await http.request("POST", "/chat/completions", b"{}")  # the server may have acted on it
        http.close()
    assert server.connections == 1 and len(server.requests) == 2


class WholeAnswers(RawServer):
    """Writes each answer in one piece (so what follows a body arrives with it) and counts the connections the
    client closed."""

    def __init__(self, answers: list[bytes]) -> None:
        super().__init__(answers)
        self.ended = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.answers:
                self.requests.append(await reader.readuntil(b"\r\n\r\n"))
                writer.write(self.answers.pop(0))
                await writer.drain()
            await reader.read()  # until the client hangs up
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.ended += 1
            writer.close()


async def test_a_stream_left_midway_or_followed_by_stray_bytes_never_serves_the_next_answer() -> None:
    midway = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n"
    stray = OK + b"HTTP/1.1 500 Stale\r\n\r\n"
    server = WholeAnswers([midway, stray, OK])
    async with serving(server) as port:
        http = client(port)
        response = await http.request("GET", "/stream")
        assert await anext(response.iter_any()) == b"abc"  # the rest, more than the chunked end, came with it
        response.release()
        second = await http.request("GET", "/models")
        assert await second.read() == b"ok"  # a stray answer came right after the body
        second.release()
        await wait_for(lambda: server.ended == 2, within=5)  # both closed at once, not kept for a later request
        third = await http.request("GET", "/models")
        assert (third.status, await third.read()) == (200, b"ok")
        third.release()
        http.close()
    assert server.connections == 3


async def test_an_idle_connection_is_closed_after_keep_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1, "KEEP_IDLE", 0.1)
    server = RawServer([OK, OK])
    async with serving(server) as port:
        http: Client = client(port)
        response = await http.request("GET", "/models")
        assert await response.read() == b"ok"
        response.release()
        await asyncio.sleep(0.2)
        again = await http.request("GET", "/models")
        assert await again.read() == b"ok"
        again.release()
        http.close()
    assert server.connections == 2
