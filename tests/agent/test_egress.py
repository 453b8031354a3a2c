"""The sandbox's egress proxy driven over a real socket, without a sandbox: what it answers a request it cannot
serve (too many connections, an unreachable host, a target that is no address), the Host header it adds, and a
client that sends garbage or goes away is let go without an answer."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from aiohttp import web

from bot.agent.tools import egress
from tests.agent.test_sandbox_network import POLICY
from tests.fakes.serve import serve_local
from tests.harness import wait_for


@pytest_asyncio.fixture
async def served() -> AsyncIterator[tuple[int, egress.Proxy]]:
    """The proxy's port (on 127.0.0.1, where a sandbox would find it inside its namespace), and the proxy."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server, running = await egress.serve(sock, POLICY)
    yield sock.getsockname()[1], running
    await running.close()
    server.close()


@pytest.fixture
def proxy(served: tuple[int, egress.Proxy]) -> int:
    return served[0]


@pytest_asyncio.fixture
async def site() -> AsyncIterator[tuple[int, list[str]]]:
    """`public.example` (the allowed name for 127.0.0.1): its port, and the Host header of each request."""
    hosts: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hosts.append(request.headers.get("Host", ""))
        return web.Response(text="a public page")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    runner, port = await serve_local(app)
    yield port, hosts
    await runner.cleanup()


async def ask(port: int, request: bytes) -> bytes:
    """Everything the proxy answers to `request` (it closes the connection after one)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    try:
        async with asyncio.timeout(10):
            return await reader.read()
    finally:
        writer.close()


async def test_what_cannot_be_served_gets_a_status_saying_why(proxy: int) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        nobody = closed.getsockname()[1]  # public.example on a port nobody listens on
    answer = await ask(proxy, f"GET http://public.example:{nobody}/ HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 502 Bad Gateway\r\n")
    assert answer.endswith(b"could not connect to public.example: ConnectionRefusedError\n")
    answer = await ask(proxy, b"CONNECT [::1 HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert answer.endswith(b"bothub sandbox proxy: the request target is not a valid address\n")


async def test_one_connection_too_many_is_told_to_come_back(served: tuple[int, egress.Proxy],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(egress, "MAX_CONNECTIONS", 1)
    proxy, running = served
    _, holding = await asyncio.open_connection("127.0.0.1", proxy)  # sends no head: keeps its slot
    await wait_for(lambda: len(running.tasks) == 1)
    try:
        answer = await ask(proxy, b"")  # the answer comes before any request (one sent would be left unread)
    finally:
        holding.close()
    assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert answer.endswith(b"more than 1 connections at once\n")


async def test_a_request_without_a_host_header_gets_the_urls(proxy: int, site: tuple[int, list[str]]) -> None:
    port, hosts = site
    answer = await ask(proxy, f"GET http://public.example:{port}/page HTTP/1.0\r\nUser-Agent: t\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.0 200 OK") and answer.endswith(b"a public page")
    assert hosts == [f"public.example:{port}"]


@pytest.mark.parametrize("sent", [b"GET http://public.example/ HTTP/1.1\r\nX: " + b"y" * (40 * 1024),
                                  b"GET http://public.example/ HT"], ids=["head-too-long", "gone-midway"])
async def test_garbage_or_a_client_gone_midway_gets_no_answer(proxy: int, sent: bytes,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy)
    with caplog.at_level(logging.ERROR):
        writer.write(sent)
        writer.write_eof()
        async with asyncio.timeout(10):
            assert await reader.read() == b""  # closed, nothing said
        writer.close()
        await asyncio.sleep(0.1)
    assert caplog.records == []  # an ordinary end, not a handler's crash
