"""The adapter contract at an orderly stop (SIGTERM, a drain, a hand-over), held against every adapter over its
real transport: a stop that lands while a streamed reply gets its final edit and while a message is being handed
to the hub finishes both or fails the edit as a send failure the hub handles. The message reaches the inbox and
the platform is told it was delivered. Afterwards nothing of the adapter runs, it holds no open client, and the
platform sees its connections closed.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import aiohttp
import httpx
import pytest

from bot.adapter import SendError
from bot.replies import Reply
from tests.adapters.contract.driver import Driver, payload
from tests.adapters.contract.drivers import make_driver, platforms
from tests.adapters.contract.test_contract import received

TESTS = str(Path(__file__).resolve().parents[2])
SERVING = ("/aiohttp/web_protocol.py", "/aiohttp/web_server.py")  # a fake's (or the driver's) request handlers


def _ours(task: asyncio.Task[object]) -> bool:
    """A task of the test's own side: a fake server, the driver's client, a request handler serving them."""
    code = getattr(task.get_coro(), "cr_code", None)
    name = code.co_filename if code is not None else ""
    return name.startswith(TESTS) or name.endswith(SERVING)


def _open_clients(root: object) -> list[object]:
    """HTTP clients (sessions, connectors) reachable from the adapter that are not closed."""
    found, seen, todo = [], set(), [root]
    while todo:
        node = todo.pop()
        if id(node) in seen or isinstance(node, type | type(gc) | Callable):  # classes, modules, functions
            continue
        seen.add(id(node))
        if _is_open(node):
            found.append(node)
        todo.extend(gc.get_referents(node))
    return found


def _is_open(node: object) -> bool:
    if isinstance(node, aiohttp.ClientSession | aiohttp.BaseConnector):
        return not node.closed
    return isinstance(node, httpx.AsyncClient) and not node.is_closed


async def _until(done: Callable[[], bool], within: float = 5.0) -> bool:
    """Polled: a server notices a closed connection on its own time, with nothing to wait on."""
    for _ in range(int(within / 0.01)):
        if done():
            return True
        await asyncio.sleep(0.01)
    return done()


@pytest.fixture
def leaks() -> Iterator[list[warnings.WarningMessage]]:
    """The ResourceWarnings (aiohttp's "Unclosed client session", an unclosed socket) a collection raises."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        yield caught


@pytest.mark.parametrize("platform", platforms())
async def test_a_stop_mid_stream_and_mid_hand_over_ends_cleanly_and_loses_nothing_acknowledged(
        platform: str, monkeypatch: pytest.MonkeyPatch, leaks: list[warnings.WarningMessage]) -> None:
    driver: Driver = make_driver(platform, monkeypatch)
    await driver.start()
    try:
        await _stop_mid_flight(driver)
    finally:
        await driver.stop()  # a second stop of the adapter is harmless
    driver.adapter = None  # type: ignore[assignment]  # collect everything the adapter held
    gc.collect()
    assert not [str(w.message) for w in leaks if issubclass(w.category, ResourceWarning)]


async def _stop_mid_flight(driver: Driver) -> None:
    adapter = driver.adapter
    chat = (await received(driver, "dm")).chat
    final: asyncio.Task[None] | None = None
    if adapter.capabilities.can_edit:
        ref = await adapter.send(chat, Reply("Hel"), final=False)
        final = asyncio.create_task(adapter.edit(ref, Reply("Hello world"), final=True))
    gate = driver.inbox.hold()
    taking = asyncio.create_task(driver.inject(payload(driver.name, "dm")["event"]))
    await asyncio.wait_for(driver.inbox.arriving.wait(), 5.0)  # the adapter is handing it to the hub
    driver.answered()
    stopping = asyncio.create_task(adapter.stop())
    await asyncio.sleep(0.05)  # the stop is under way while the inbox write is still going
    gate.set()
    await asyncio.wait_for(stopping, 10.0)

    if final is not None:  # the final edit went out or failed as a send failure the hub handles
        await asyncio.wait({final}, timeout=1.0)
        assert final.done(), "the final edit still runs after the stop"
        if not final.cancelled() and (error := final.exception()) is not None:
            assert isinstance(error, SendError), repr(error)
        elif not final.cancelled():  # it went out: the platform shows the whole answer
            assert (await driver.shown_after_stop(chat))[-1:] == ["Hello world"]
    # the hand-over under way got through (it took far less than any stop grace) and the platform was told so:
    # not lost, and not sent again to be answered twice
    await asyncio.wait_for(taking, 5.0)
    assert len(driver.inbox.accepted) == 2, "a message being taken in at the stop is not in the inbox"
    assert driver.confirmed(), "the platform was not told the message it handed over was delivered"
    assert not adapter.connected()
    left = [t for t in asyncio.all_tasks() if not t.done() and t is not asyncio.current_task() and not _ours(t)]
    assert not left, f"still running after stop: {left}"
    assert not _open_clients(adapter), "an HTTP client of the adapter is still open"
    assert await _until(lambda: driver.links() == 0), f"the platform still sees {driver.links()} connection(s)"
