"""Drivers of the messaging platforms: each starts the real adapter against its fake server on 127.0.0.1,
feeds recorded payloads in, reads what the chat shows and scripts the platform's rate limits and refusals.
"""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import aiohttp
import discord
import pytest

from adapters.discord import DiscordConfig
from adapters.discord import adapter as discord_adapter
from adapters.feishu import FeishuConfig
from adapters.feishu import adapter as feishu_adapter
from adapters.telegram import TelegramConfig
from adapters.telegram import adapter as telegram_adapter
from bot.adapter import WebHandler
from bot.messages import ChatRef, SentRef
from tests.adapters.contract.driver import ABILITIES, Driver, serve_routes, services
from tests.fakes import discord_api, discord_rules, feishu_api, feishu_events, telegram_api
from tests.fakes.serve import open_connections

# groups, overheard talk, buttons that replace, edits, 429s and gone chats; no native feedback controls
EVERYTHING = frozenset(ABILITIES) - {"feedback"}


class TelegramDriver(Driver):
    name, limit, platform_can = "telegram", 4096, EVERYTHING

    async def start(self) -> None:
        self.fake = telegram_api.FakeTelegram()
        await self.fake.start()
        env = {"TELEGRAM_BOT_TOKEN": telegram_api.TOKEN, "TELEGRAM_API_BASE": self.fake.api_base}
        self.adapter = telegram_adapter.create(TelegramConfig(), env, services([]))
        await self.adapter.start(self.inbox)

    async def stop(self) -> None:
        await self.adapter.stop()
        await self.fake.stop()

    async def inject(self, event: dict[str, Any]) -> None:
        chat = event["message"]["chat"]
        self.fake.open_chat(chat["id"], chat["type"])
        self.fake.inject_update(copy.deepcopy(event))

    async def offer(self, event: dict[str, Any]) -> None:
        await self.inject(event)

    async def offer_again(self) -> None:
        """Nothing: the next getUpdates hands an unconfirmed update over again."""

    async def press(self, event: dict[str, Any], pressed: SentRef) -> None:
        query = event["callback_query"]
        self.fake.inject_callback(int(pressed.chat.chat_id), int(pressed.message_id), query["data"], query["from"])

    async def shown(self, chat: ChatRef) -> list[str]:
        return self.fake.bot_texts(int(chat.chat_id))

    def send_attempts(self) -> int:
        return len(self.fake.calls_of("sendMessage"))

    def rate_limit_next_send(self) -> None:
        self.fake.rate_limit("sendMessage", 1)

    def chat_gone(self, chat: ChatRef) -> None:
        self.fake.block(int(chat.chat_id))

    def links(self) -> int:
        return open_connections(self.fake._runner)

    def confirmed(self) -> bool:
        return self.fake.updates.unconfirmed == 0  # confirmed by a later offset: Telegram will not resend it


class DiscordDriver(Driver):
    name, limit, platform_can = "discord", discord_rules.MAX_CONTENT, EVERYTHING
    acknowledges = False  # the gateway has no per-event acknowledgement, and never redelivers
    SEND = r"/channels/\d+/messages"

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        super().__init__()
        # the adapter points these process-wide class attributes at the fake; put the originals back afterwards
        monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
        monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY",
                            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
        monkeypatch.setattr(discord_adapter, "GUILD_READY_TIMEOUT", 0.05)

    async def start(self) -> None:
        self.fake = discord_api.FakeDiscord()
        await self.fake.start()
        settings = DiscordConfig(api_base=self.fake.api_base, gateway_url=self.fake.gateway_url,
                                 message_content_intent=True)  # group talk arrives with its text
        self.adapter = discord_adapter.create(settings, {"DISCORD_BOT_TOKEN": discord_api.TOKEN}, services([]))
        await self.adapter.start(self.inbox)

    async def stop(self) -> None:
        await self.adapter.stop()
        await self.fake.stop()

    async def inject(self, event: dict[str, Any]) -> None:
        data = copy.deepcopy(event["d"])
        if event["t"] == "INTERACTION_CREATE":
            data = self.fake.replay(data)
        await self.fake.dispatch(event["t"], data)

    async def offer(self, event: dict[str, Any]) -> None:
        self._offered = event
        await self.inject(event)

    async def offer_again(self) -> None:
        """Discord's gateway never sends an event again: this is the same dispatch once more, to show nothing
        of the adapter drops it."""
        await self.inject(self._offered)

    async def press(self, event: dict[str, Any], pressed: SentRef) -> None:
        data = self.fake.replay(copy.deepcopy(event["d"]), message=self.fake.messages[pressed.message_id])
        await self.fake.dispatch(event["t"], data)

    async def shown(self, chat: ChatRef) -> list[str]:
        channel = chat.thread_id or chat.chat_id
        return [m["content"] for m in self.fake.messages.values()
                if m["channel_id"] == channel and m["author"]["id"] == discord_api.APP_ID]

    def send_attempts(self) -> int:
        return len(self.fake.calls_to("POST", self.SEND))

    def rate_limit_next_send(self) -> None:
        self.fake.rate_limit("POST", self.SEND, 0.3)

    def chat_gone(self, chat: ChatRef) -> None:
        self.fake.fail("POST", self.SEND, lambda: discord_rules.error_response(404, 10003, "Unknown Channel"))

    def links(self) -> int:
        return open_connections(self.fake._runner)


class FeishuDriver(Driver):
    name, limit, platform_can = "feishu", feishu_adapter.FeishuAdapter.capabilities.max_text, EVERYTHING
    columns = 4  # a card's column_set
    ENCRYPT_KEY, TOKEN = "contract-encrypt-key", "contract-verification-token"

    def __init__(self) -> None:
        super().__init__()
        self._event_ids = itertools.count(1)
        self._answered_ok = True  # the last webhook request was answered 200: Feishu will not send it again
        self._offered: dict[str, Any] = {}

    async def start(self) -> None:
        self.fake = feishu_api.FakeFeishu()
        await self.fake.start()
        routes: list[tuple[str, str, WebHandler]] = []
        env = {"FEISHU_APP_ID": feishu_api.APP_ID, "FEISHU_APP_SECRET": feishu_api.APP_SECRET,
               "FEISHU_ENCRYPT_KEY": self.ENCRYPT_KEY, "FEISHU_VERIFICATION_TOKEN": self.TOKEN}
        settings = FeishuConfig(transport="webhook", domain=self.fake.domain)
        self.adapter = feishu_adapter.create(settings, env, services(routes))
        self._runner, base = await serve_routes(routes)
        self._url = base + settings.webhook_path
        self._session = aiohttp.ClientSession()
        await self.adapter.start(self.inbox)

    async def stop(self) -> None:
        await self.adapter.stop()
        await self._session.close()
        await self._runner.cleanup()
        await self.fake.stop()

    async def inject(self, event: dict[str, Any]) -> None:
        event = copy.deepcopy(event)
        if "message" in event["event"]:
            self.fake.record_incoming(event)
        await self._post(event)

    async def press(self, event: dict[str, Any], pressed: SentRef) -> None:
        event = copy.deepcopy(event)
        event["event"]["context"]["open_message_id"] = pressed.message_id
        await self._post(event)

    async def offer(self, event: dict[str, Any]) -> None:
        self._offered = self._fresh(copy.deepcopy(event))
        self.fake.record_incoming(self._offered)
        await self.offer_again()

    async def offer_again(self) -> None:
        await self._send(self._offered)

    async def _post(self, event: dict[str, Any]) -> None:
        text = await self._send(self._fresh(event))
        assert self._answered_ok, text

    def _fresh(self, event: dict[str, Any]) -> dict[str, Any]:
        """A fresh event id, so a replayed payload is not a redelivery."""
        event["header"] = {**event["header"], "token": self.TOKEN, "event_id": f"ev-{next(self._event_ids)}"}
        return event

    async def _send(self, event: dict[str, Any]) -> str:
        """Encrypted and signed like Feishu; the answer's body."""
        body, headers = feishu_events.signed_request(self.ENCRYPT_KEY, event)
        async with self._session.post(self._url, data=body, headers=headers) as resp:
            self._answered_ok = resp.status == 200
            return await resp.text()

    def confirmed(self) -> bool:
        return self._answered_ok

    async def shown(self, chat: ChatRef) -> list[str]:
        return self.fake.shown(chat.chat_id)

    def send_attempts(self) -> int:
        return len(self.fake.requests("POST", "/im/v1/messages"))

    def rate_limit_next_send(self) -> None:
        self.fake.fail("POST", "/im/v1/messages", code=99991400, status=429)

    def chat_gone(self, chat: ChatRef) -> None:
        self.fake.fail("POST", "/im/v1/messages", code=230002)  # the bot was removed from the chat

    def links(self) -> int:
        return open_connections(self.fake._runner)

    async def stream_open(self, ref: SentRef) -> bool:
        content = json.loads(self.fake.messages[ref.message_id]["content"])
        card_id = content.get("data", {}).get("card_id") if content.get("type") == "card" else None
        return card_id is not None and self.fake.cards[card_id].streaming
