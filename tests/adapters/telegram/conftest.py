"""A real PTB adapter wired to the fake Bot API, with a recording on_message."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest_asyncio
from aiohttp import web

from adapters.telegram import TelegramConfig
from adapters.telegram.adapter import TelegramAdapter, create
from bot.adapter import AdapterServices, ConversationChoice, NotKept, WebHandler
from bot.commands import menu
from bot.messages import ChatRef, IncomingMessage
from tests.fakes.telegram_api import TOKEN, FakeTelegram


@dataclass
class Inbox:
    """Records what the adapter hands to the hub."""

    received: list[IncomingMessage] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    refuse: int = 0  # hand-overs still to fail as a failed inbox write does (NotKept)

    async def __call__(self, message: IncomingMessage) -> None:
        if self.refuse > 0:
            self.refuse -= 1
            raise NotKept("the inbox write failed")
        self.received.append(message)
        self.arrived.set()

    async def next(self, within: float = 5.0) -> IncomingMessage:
        async with asyncio.timeout(within):
            while not self.received:
                self.arrived.clear()
                await self.arrived.wait()
        return self.received.pop(0)


async def _no_conversations(_chat: ChatRef, _user_id: str) -> list[ConversationChoice]:
    return []


async def _never_seen(_key: str) -> bool:
    return False


def services(routes: dict[tuple[str, str], WebHandler] | None = None) -> AdapterServices:
    def add_route(method: str, path: str, handler: WebHandler) -> None:
        if routes is None:
            raise AssertionError("polling mode must not register routes")
        routes[(method, path)] = handler

    return AdapterServices(list_conversations=_no_conversations, seen=_never_seen, add_route=add_route,
                           commands=menu())


def env(fake: FakeTelegram, **extra: str) -> dict[str, str]:
    return {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": fake.api_base, **extra}


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    server = FakeTelegram()
    await server.start()
    yield server
    await server.stop()


@pytest_asyncio.fixture
async def polling(fake: FakeTelegram) -> AsyncIterator[tuple[TelegramAdapter, Inbox]]:
    adapter = create(TelegramConfig(), env(fake), services())
    inbox = Inbox()
    await adapter.start(inbox)
    yield adapter, inbox
    await adapter.stop()


@dataclass
class WebhookHub:
    """The hub's aiohttp server as far as the adapter can tell: routes added in create()."""

    adapter: TelegramAdapter
    inbox: Inbox
    url: str


@pytest_asyncio.fixture
async def webhook(fake: FakeTelegram) -> AsyncIterator[WebhookHub]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/telegram/webhook"
    config = TelegramConfig(webhook_url=url)
    routes: dict[tuple[str, str], WebHandler] = {}
    adapter = create(config, env(fake, TELEGRAM_WEBHOOK_SECRET="right-secret_1"), services(routes))
    app = web.Application()
    for (method, path), handler in routes.items():
        app.router.add_route(method, path, handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    inbox = Inbox()
    await adapter.start(inbox)
    yield WebhookHub(adapter, inbox, url)
    await adapter.stop()
    await runner.cleanup()
