"""Server-sent events as a browser tab sees them: frames in order, a keep-alive comment while idle, the end when
told; a tab that falls too far behind is stopped rather than buffered forever, and one that goes away ends its
stream quietly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from bot.httpkit import sse
from tests.fakes.serve import serve_local


@pytest_asyncio.fixture
async def stream() -> AsyncIterator[tuple[str, asyncio.Queue[str | None], list[web.StreamResponse]]]:
    queue: asyncio.Queue[str | None] = asyncio.Queue(maxsize=3)
    served: list[web.StreamResponse] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        served.append(await sse.serve(request, queue))
        return served[-1]

    app = web.Application()
    app.router.add_get("/events", handler)
    runner, port = await serve_local(app)
    yield f"http://127.0.0.1:{port}/events", queue, served
    await runner.cleanup()


async def test_frames_arrive_in_order_with_keepalives_until_the_end(
        stream: tuple[str, asyncio.Queue[str | None], list[web.StreamResponse]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url, queue, _ = stream
    monkeypatch.setattr(sse, "KEEPALIVE", 0.05)
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert response.headers["Content-Type"] == "text/event-stream"
        assert await response.content.readline() == b": open\n"
        await response.content.readline()
        assert await response.content.readline() == b": keepalive\n"  # idle: a comment keeps proxies open
        assert sse.offer(queue, sse.frame("token", {"text": "héllo"}))
        sse.finish(queue)
        rest = (await response.read()).decode()
    assert 'event: token\ndata: {"text": "héllo"}\n\n' in rest
    assert rest.endswith("\n\n")


def test_a_full_queue_is_emptied_and_told_to_stop() -> None:
    queue: asyncio.Queue[str | None] = asyncio.Queue(maxsize=2)
    assert sse.offer(queue, "a") and sse.offer(queue, "b")
    assert not sse.offer(queue, "c")  # the tab fell behind: it reconnects and resyncs
    assert [queue.get_nowait() for _ in range(queue.qsize())] == [None]
    for text in ("a", "b"):
        queue.put_nowait(text)
    sse.finish(queue)  # no room for the end: what was queued goes, the end comes at once
    assert [queue.get_nowait() for _ in range(queue.qsize())] == [None]
    queue.put_nowait("a")
    sse.finish(queue)
    assert [queue.get_nowait() for _ in range(queue.qsize())] == ["a", None]


async def test_a_tab_that_goes_away_ends_its_stream_quietly(
        stream: tuple[str, asyncio.Queue[str | None], list[web.StreamResponse]]) -> None:
    url, queue, served = stream
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert await response.content.readline() == b": open\n"
    for n in range(50):  # writes into the closed connection until the server notices
        if served:
            break
        sse.offer(queue, sse.frame("token", {"n": n}))
        await asyncio.sleep(0.05)
    assert served, "the stream never ended after the tab went away"
