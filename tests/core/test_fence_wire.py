"""The fence's last check is made once a request holds its connection (bot/httpkit/fence.py): a reply that waited
for a free connection of its pool while its chat was taken over (its replica froze in that wait) never reaches
the platform, on either HTTP client the adapters use; a reply of a chat still owned goes out as before."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import aiohttp
import httpx
import pytest
from aiohttp import web

from bot.httpkit.fence import answering, before_request, fenced_trace
from bot.store.claims import NotOwner

Post = Callable[[str], Coroutine[Any, Any, object]]


class Platform:
    """A local server whose /hold requests wait until released; it records the path of every whole request."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.release = asyncio.Event()
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        await request.read()  # a request is the platform's once its body is in
        self.seen.append(request.path)
        if request.path == "/hold":
            await self.release.wait()
        return web.json_response({"ok": True})


@pytest.fixture
async def platform() -> AsyncIterator[Platform]:
    served = Platform()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", served.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    served.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
    yield served
    served.release.set()
    await runner.cleanup()


@pytest.fixture(params=["httpx", "aiohttp"])
async def post(request: pytest.FixtureRequest) -> AsyncIterator[Post]:
    """A POST through a client of one connection, hooked to the fence as the adapters hook theirs."""
    if request.param == "httpx":
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=1),
                                     event_hooks={"request": [before_request]}) as client:
            yield lambda url: client.post(url, json={"text": "hi"})
    else:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1),
                                         trace_configs=[fenced_trace()]) as session:
            async def via_aiohttp(url: str) -> object:
                async with session.post(url, json={"text": "hi"}) as response:
                    return await response.read()

            yield via_aiohttp


async def _wait_for(predicate: Callable[[], bool]) -> None:
    for _ in range(500):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition was never met")


@pytest.mark.parametrize("taken_over", [True, False])
async def test_a_reply_waiting_for_a_connection_is_checked_again_once_it_has_one(
        platform: Platform, post: Post, taken_over: bool) -> None:
    held = asyncio.create_task(post(f"{platform.url}/hold"))  # the pool's one connection is busy
    await _wait_for(lambda: platform.seen == ["/hold"])
    owner, checks = True, 0

    async def confirm() -> None:
        nonlocal checks
        checks += 1
        if not owner:
            raise NotOwner("replica a does not own telegram:1 now")

    async def reply() -> object:
        answering.set(confirm)  # a task's own context: as in a chat's lane
        return await post(f"{platform.url}/reply")

    waiting = asyncio.create_task(reply())
    await _wait_for(lambda: checks == 1)  # checked before the wait: still ours
    await asyncio.sleep(0.05)
    assert not waiting.done()  # it waits for the connection
    owner = not taken_over  # frozen in the wait: its peers took the chat over
    platform.release.set()
    await held
    if taken_over:
        with pytest.raises((NotOwner, httpx.HTTPError, aiohttp.ClientError)):
            await waiting
        assert platform.seen == ["/hold"]
    else:
        await waiting
        assert platform.seen == ["/hold", "/reply"]
    assert checks >= 2  # before the wait, and once it has the connection (httpx: before headers and before body)


async def test_a_body_that_would_leave_after_the_chat_was_taken_over_never_completes_the_request(
        platform: Platform) -> None:
    checks = 0

    async def confirm() -> None:  # the headers go out, then the replica freezes for a turn of the event loop
        nonlocal checks
        checks += 1
        if checks > 2:
            raise NotOwner("replica a does not own telegram:1 now")

    answering.set(confirm)
    async with httpx.AsyncClient(event_hooks={"request": [before_request]}) as client:
        with pytest.raises(NotOwner):
            await client.post(f"{platform.url}/reply", json={"text": "hi"})
    await asyncio.sleep(0.1)
    assert checks == 3 and platform.seen == []
