"""A finished answer posted to the caller's callback URL: signed, retried on 5xx and network errors, given up on a
refusal, and never posted where the SSRF guard says no — against a real receiver on 127.0.0.1."""

from __future__ import annotations

import hashlib
import hmac
import socket
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from aiohttp import web

from adapters.api.callbacks import SIGNATURE, Callbacks
from bot.httpkit.netguard import Refused
from tests.fakes.serve import serve_local

KEY = "receiver-signing-key"


class Receiver:
    """Answers each post with the next scripted status (200 once the script is used up) and keeps what came."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.posts: list[tuple[bytes, str]] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.posts.append((await request.read(), request.headers.get(SIGNATURE, "")))
        return web.Response(status=self.statuses.pop(0) if self.statuses else 200)


@pytest_asyncio.fixture
async def receiver() -> AsyncIterator[tuple[Receiver, str]]:
    got = Receiver()
    app = web.Application()
    app.router.add_post("/done", got.handle)
    runner, port = await serve_local(app)
    yield got, f"http://127.0.0.1:{port}/done"
    await runner.cleanup()


def callbacks(allow: tuple[str, ...] = ("127.0.0.1",), attempts: int = 3) -> Callbacks:
    return Callbacks(list(allow), timeout=5.0, attempts=attempts, backoff=0.01)


async def test_a_5xx_is_retried_and_every_post_is_signed(receiver: tuple[Receiver, str]) -> None:
    got, url = receiver
    got.statuses = [503, 429]
    assert await callbacks().deliver(url, {"answer": "ready ✓"}, KEY)
    assert len(got.posts) == 3 and len({body for body, _ in got.posts}) == 1
    body, signature = got.posts[-1]
    assert signature == "sha256=" + hmac.new(KEY.encode(), body, hashlib.sha256).hexdigest()


async def test_a_refusal_is_not_retried_and_the_last_attempt_gives_up(receiver: tuple[Receiver, str]) -> None:
    got, url = receiver
    got.statuses = [404]
    assert not await callbacks().deliver(url, {"answer": "x"}, KEY)
    assert len(got.posts) == 1
    got.statuses, got.posts = [500, 502, 503], []
    assert not await callbacks().deliver(url, {"answer": "x"}, KEY)
    assert len(got.posts) == 3


async def test_nobody_listening_is_retried_then_given_up() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: a connection there is refused
    assert not await callbacks(attempts=2).deliver(f"http://127.0.0.1:{port}/done", {"answer": "x"}, KEY)


async def test_a_host_the_guard_refuses_is_never_posted_to(receiver: tuple[Receiver, str]) -> None:
    got, url = receiver
    assert not await callbacks(allow=()).deliver(url, {"answer": "x"}, KEY)  # loopback, not allowed
    assert got.posts == []
    with pytest.raises(Refused, match="not a valid URL"):
        await callbacks().check("http://[::1")
