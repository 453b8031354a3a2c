"""Fixtures: the fake Feishu platform, and the real adapter built by `create()` against it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import aiohttp
import pytest_asyncio
from aiohttp import web

from adapters.feishu import FeishuConfig
from adapters.feishu import adapter as feishu_adapter
from bot.adapter import AdapterServices, ConversationChoice, NotKept, WebHandler
from bot.messages import ChatRef, IncomingMessage
from tests.fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishu
from tests.fakes.feishu_events import signed_request

ENCRYPT_KEY, VERIFICATION_TOKEN = "test-encrypt-key", "test-verification-token"
WEBHOOK_PATH = "/feishu/webhook"


@dataclass
class Harness:
    """A started adapter, what it handed to the hub, and a way to push webhook events at it."""

    fake: FakeFeishu
    adapter: feishu_adapter.FeishuAdapter
    received: list[IncomingMessage] = field(default_factory=list)
    seen_keys: set[str] = field(default_factory=set)
    url: str = ""
    session: aiohttp.ClientSession | None = None
    admit: asyncio.Event = field(default_factory=asyncio.Event)  # clear it to hold the hub's intake (a slow inbox)
    hub_fails: bool = False  # set it for a hub that raises on whatever it is handed

    def __post_init__(self) -> None:
        self.admit.set()

    async def post(self, event: dict, *, headers: dict[str, str] | None = None) -> aiohttp.ClientResponse:
        body, signed = signed_request(ENCRYPT_KEY, event)
        assert self.session is not None
        async with self.session.post(self.url, data=body, headers=headers or signed) as resp:
            await resp.read()
            return resp

    async def wait_received(self, count: int) -> list[IncomingMessage]:
        await eventually(lambda: len(self.received) >= count)
        return self.received


async def eventually(condition: Callable[[], bool]) -> None:
    """Poll for up to 5 s: handlers hand events to the hub's loop in tasks."""
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not met within 5 s")


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeFeishu]:
    server = FakeFeishu()
    await server.start()
    yield server
    await server.stop()


def env() -> dict[str, str]:
    return {
        "FEISHU_APP_ID": APP_ID,
        "FEISHU_APP_SECRET": APP_SECRET,
        "FEISHU_ENCRYPT_KEY": ENCRYPT_KEY,
        "FEISHU_VERIFICATION_TOKEN": VERIFICATION_TOKEN,
    }


async def no_conversations(chat: ChatRef, user_id: str) -> list[ConversationChoice]:
    return []


StartAdapter = Callable[..., Awaitable[Harness]]


@pytest_asyncio.fixture
async def start_adapter(fake: FakeFeishu) -> AsyncIterator[StartAdapter]:
    """start_adapter(transport="webhook") → Harness; webhook routes are served on 127.0.0.1:0."""
    cleanups: list[Callable[[], Awaitable[None]]] = []

    async def start(transport: str = "webhook", secrets: dict[str, str] | None = None) -> Harness:
        routes: list[tuple[str, str, WebHandler]] = []
        seen_keys: set[str] = set()

        async def seen(key: str) -> bool:
            if key in seen_keys:
                return True
            seen_keys.add(key)
            return False

        async def unsee(key: str) -> None:
            seen_keys.discard(key)

        services = AdapterServices(
            list_conversations=no_conversations,
            seen=seen,
            unsee=unsee,
            add_route=lambda method, path, handler: routes.append((method, path, handler)),
        )
        config = FeishuConfig(transport=transport, domain=fake.domain)  # type: ignore[arg-type]
        adapter = feishu_adapter.create(config, env() if secrets is None else secrets, services)
        harness = Harness(fake, adapter, seen_keys=seen_keys)

        async def on_message(msg: IncomingMessage) -> None:
            await harness.admit.wait()
            if harness.hub_fails:
                raise NotKept("the hub's inbox write failed")
            harness.received.append(msg)

        await adapter.start(on_message)
        cleanups.append(adapter.stop)
        if routes:
            app = web.Application()
            for method, path, handler in routes:
                app.router.add_route(method, path, handler)
            runner = web.AppRunner(app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            harness.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}{WEBHOOK_PATH}"  # type: ignore[union-attr]
            harness.session = aiohttp.ClientSession()
            cleanups.append(harness.session.close)
            cleanups.append(runner.cleanup)
        return harness

    yield start
    for cleanup in reversed(cleanups):
        await cleanup()
