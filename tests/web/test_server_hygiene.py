"""Issue 28 §6: the hub's web server under slow or greedy clients, the sign-in redirect and throttle, and a
reverse proxy in front (raw sockets and aiohttp against the real app on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.app import App
from bot.httpkit.auth import MAX_FAILURES, Auth, TooManyAttempts
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import running_app
from tests.web.conftest import PASSWORD

GIVE_UP = 30.0  # seconds a test waits for the server to hang up before calling it a failure


@contextlib.asynccontextmanager
async def server(tmp_path: Path, fake: FakeOpenAI, **settings: Any) -> AsyncIterator[App]:
    config = {"server": {"enabled": True, "port": 0, **settings}}
    async with running_app(tmp_path, fake.base_url, config=config, env={"BOTHUB_ADMIN_PASSWORD": PASSWORD}) as app:
        yield app


async def trickle(port: int, head: bytes, then: bytes = b"") -> int:
    """Send `head` at once, then `then` one byte every 0.2 s; the bytes sent when the server hung up."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    sent = 0
    try:
        async with asyncio.timeout(GIVE_UP):
            for byte in then * 1000:
                writer.write(bytes([byte]))
                await writer.drain()
                sent += 1
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.2):
                        if await reader.read(1000) == b"":
                            return sent
    except (ConnectionResetError, BrokenPipeError):
        return sent
    finally:
        writer.close()
    raise AssertionError("the server kept the connection")


async def test_a_head_sent_a_byte_at_a_time_is_cut_off(tmp_path: Path, fake: FakeOpenAI) -> None:
    async with server(tmp_path, fake, header_timeout=1.0) as app:
        assert app.web_port is not None
        await trickle(app.web_port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"X-Slow: 1\r\n")


async def test_a_body_sent_a_byte_at_a_time_is_cut_off(tmp_path: Path, fake: FakeOpenAI) -> None:
    async with server(tmp_path, fake, body_timeout=1.0) as app:
        assert app.web_port is not None
        head = (b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                b"Content-Length: 100000\r\n\r\n")
        await trickle(app.web_port, head, b"password=")


async def test_one_address_holds_only_so_many_connections(tmp_path: Path, fake: FakeOpenAI) -> None:
    async with server(tmp_path, fake, max_connections_per_address=3) as app:
        held = [await asyncio.open_connection("127.0.0.1", app.web_port) for _ in range(3)]
        reader, writer = await asyncio.open_connection("127.0.0.1", app.web_port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        with contextlib.suppress(ConnectionResetError):
            assert await asyncio.wait_for(reader.read(100), GIVE_UP) == b""  # refused: the fourth
        writer.close()
        held.pop()[1].close()
        await asyncio.sleep(0.1)
        async with aiohttp.ClientSession() as http:
            assert (await http.get(f"http://127.0.0.1:{app.web_port}/healthz")).status == 200  # room again
        for _, w in held:
            w.close()


async def test_the_sign_in_redirect_is_rebuilt_from_its_path(tmp_path: Path, fake: FakeOpenAI) -> None:
    async with server(tmp_path, fake) as app, aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        base = f"http://127.0.0.1:{app.web_port}"
        for given, expected in (("/\t/evil.example", "/"), ("/\\evil.example/x", "/%5Cevil.example/x"),
                                ("//evil.example", "/"), ("https://evil.example/", "/"), ("/\r\nX: y", "/"),
                                ("/chats/view?chat=web:a#1", "/chats/view?chat=web:a")):
            signed = await http.post(base + "/login", data={"password": PASSWORD, "next": given},
                                     allow_redirects=False)
            assert (signed.status, signed.headers["Location"]) == (303, expected), given


def test_the_right_password_gets_through_after_a_cool_down() -> None:
    now = [1000.0]
    auth = Auth(PASSWORD, clock=lambda: now[0])
    for _ in range(MAX_FAILURES):
        with pytest.raises(PermissionError):
            auth.check_password("guess", "203.0.113.5")
    with pytest.raises(TooManyAttempts) as locked:
        auth.check_password(PASSWORD, "203.0.113.5")
    assert 0 < locked.value.retry_after <= 10
    assert auth.check_password(PASSWORD, "198.51.100.7")  # another address is not locked out
    now[0] += 10
    assert auth.check_password(PASSWORD, "203.0.113.5")  # cooled down: the right password works


async def test_behind_a_trusted_proxy_clients_are_told_apart_and_cookies_are_secure(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    async with server(tmp_path, fake, trusted_proxies=["127.0.0.1"]) as app, aiohttp.ClientSession() as http:
        login = f"http://127.0.0.1:{app.web_port}/login"
        for _ in range(MAX_FAILURES + 1):
            await http.post(login, data={"password": "guess"}, headers={"X-Forwarded-For": "203.0.113.5"})
        locked = await http.post(login, data={"password": PASSWORD}, headers={"X-Forwarded-For": "203.0.113.5"})
        assert locked.status == 429
        other = await http.post(login, data={"password": PASSWORD}, allow_redirects=False,
                                headers={"X-Forwarded-For": "198.51.100.7", "X-Forwarded-Proto": "https"})
        assert other.status == 303
        cookie = other.cookies["bothub_session"]
        assert cookie["secure"] and cookie["httponly"]


async def test_without_trusted_proxies_a_forwarded_header_is_ignored(tmp_path: Path, fake: FakeOpenAI) -> None:
    async with server(tmp_path, fake) as app, aiohttp.ClientSession() as http:
        login = f"http://127.0.0.1:{app.web_port}/login"
        for n in range(MAX_FAILURES):  # a new made-up address each time does not dodge the throttle
            await http.post(login, data={"password": "guess"}, headers={"X-Forwarded-For": f"203.0.113.{n}"})
        locked = await http.post(login, data={"password": PASSWORD}, headers={"X-Forwarded-For": "198.51.100.7",
                                                                               "X-Forwarded-Proto": "https"})
        assert locked.status == 429
