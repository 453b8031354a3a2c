"""The real discord.py client, started by our adapter, against the fake Discord on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import discord
import pytest

from adapters.discord import DiscordConfig
from adapters.discord import adapter as adapter_module
from adapters.discord.adapter import DiscordAdapter, create
from bot.adapter import AdapterServices, ConversationChoice, WebHandler
from bot.commands import menu
from bot.messages import ChatRef, IncomingMessage
from tests.fakes.discord_api import CHANNEL_ID, THREAD_ID, TOKEN, FakeDiscord

# What list_conversations answers per (chat_id, thread_id): autocomplete must only show the asker's own.
CONVERSATIONS = {
    (CHANNEL_ID, None): [ConversationChoice("a1b2c3d4", "Trip planning"), ConversationChoice("e5f6a7b8", "Recipes"),
                         ConversationChoice("0f0f0f0f", "Old notes", archived=True)],
    (CHANNEL_ID, THREAD_ID): [ConversationChoice("99887766", "Thread notes")],
}


@dataclass
class Inbox:
    """Records what the adapter hands to the hub."""

    messages: list[IncomingMessage] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, message: IncomingMessage) -> None:
        self.messages.append(message)
        self._arrived.set()

    async def wait(self, count: int = 1, within: float = 5.0) -> list[IncomingMessage]:
        async with asyncio.timeout(within):
            while len(self.messages) < count:
                self._arrived.clear()
                await self._arrived.wait()
        return self.messages


async def _list_conversations(chat: ChatRef, user_id: str) -> list[ConversationChoice]:
    return CONVERSATIONS.get((chat.chat_id, chat.thread_id), [])


async def _never_seen(key: str) -> bool:
    return False


def _no_routes(method: str, path: str, handler: WebHandler) -> None:
    raise AssertionError("the discord adapter needs no web routes")


SERVICES = AdapterServices(list_conversations=_list_conversations, seen=_never_seen, add_route=_no_routes,
                           commands=menu())


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    # the adapter points these process-wide class attributes at the fake; put the originals back afterwards
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY",
                        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    monkeypatch.setattr(adapter_module, "GUILD_READY_TIMEOUT", 0.05)  # the fake has one guild; don't wait 2 s
    yield server
    await server.stop()


@pytest.fixture
def make_adapter(fake: FakeDiscord) -> Callable[..., DiscordAdapter]:
    def make(**settings: object) -> DiscordAdapter:
        config = DiscordConfig(api_base=fake.api_base, gateway_url=fake.gateway_url, **settings)
        return create(config, {"DISCORD_BOT_TOKEN": TOKEN}, SERVICES)

    return make


@pytest.fixture
async def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
async def adapter(make_adapter: Callable[..., DiscordAdapter], inbox: Inbox) -> AsyncIterator[DiscordAdapter]:
    running = make_adapter()
    await running.start(inbox)
    yield running
    await running.stop()
