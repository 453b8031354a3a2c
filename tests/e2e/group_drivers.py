"""One driver per platform for the group-context tests: people talk in a group, a thread of it, another
group and a direct chat, through the platform's fake, and someone addresses the bot."""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

import aiohttp

from bot.app import App
from bot.messages import ChatRef
from tests.fakes import discord_api, feishu_api, slack_rules, slack_users, telegram_api
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.feishu_api import FakeFeishu
from tests.fakes.feishu_events import signed_request
from tests.fakes.slack_api import FakeSlack, Posted
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import wait_for

Place = tuple[str, str | None]  # (chat_id, thread_id)


class Driver:
    name: str
    names: tuple[str, str]  # how the two senders appear to the model
    section: ClassVar[dict[str, Any]] = {}
    env: dict[str, str]
    app: App | None = None

    async def start(self) -> None: ...
    async def stop(self) -> None: ...

    def place(self, where: str) -> Place:
        raise NotImplementedError

    async def talk(self, text: str, *, sender: int, where: str = "group") -> None:
        """Someone writes in a chat without addressing the bot."""
        raise NotImplementedError

    async def _address(self, text: str, where: str) -> None:
        raise NotImplementedError

    def shown(self, where: str) -> list[str]:
        """The bot's messages there, oldest first."""
        raise NotImplementedError

    def outbound(self) -> int:
        """Sends and typing indicators the bot asked the platform for, anywhere."""
        raise NotImplementedError

    async def ask(self, text: str, where: str = "group") -> None:
        """Address the bot and wait until it has answered completely."""
        before = len(self.shown(where))
        await self._address(text, where)
        await wait_for(lambda: len(self.shown(where)) > before, within=15)
        assert self.app is not None
        chat_id, thread_id = self.place(where)
        await self.app.hub.answered(ChatRef(self.name, chat_id, thread_id))


class TelegramDriver(Driver):
    name, names = "telegram", ("Ann Lee", "Bob")
    GROUP, OTHER, TOPIC, DM = -100777, -100888, 7, 42
    BOB: ClassVar[dict[str, Any]] = {"id": 77, "is_bot": False, "first_name": "Bob"}

    async def start(self) -> None:
        self.fake = FakeTelegram()
        await self.fake.start()
        self.fake.open_chat(self.GROUP, forum=True)
        self.env = {"TELEGRAM_BOT_TOKEN": telegram_api.TOKEN, "TELEGRAM_API_BASE": self.fake.api_base}

    async def stop(self) -> None:
        await self.fake.stop()

    def place(self, where: str) -> Place:
        chat = {"group": self.GROUP, "thread": self.GROUP, "other": self.OTHER, "dm": self.DM}[where]
        return str(chat), str(self.TOPIC) if where == "thread" else None

    def _inject(self, text: str, where: str, user: dict[str, Any] | None) -> None:
        chat_id, thread = self.place(where)
        self.fake.inject_message(int(chat_id), text, from_user=user, thread_id=int(thread) if thread else None)

    async def talk(self, text: str, *, sender: int, where: str = "group") -> None:
        self._inject(text, where, (telegram_api.DEFAULT_USER, self.BOB)[sender])

    async def _address(self, text: str, where: str) -> None:
        self._inject(text if text.startswith("/") or where == "dm" else f"@hub_test_bot {text}", where, None)

    def shown(self, where: str) -> list[str]:
        chat_id, thread = self.place(where)
        return [m.text for m in self.fake.messages(int(chat_id)) if m.from_bot
                and m.thread_id == (int(thread) if thread else None)]

    def outbound(self) -> int:
        return len(self.fake.calls_of("sendMessage")) + len(self.fake.calls_of("sendChatAction"))


class DiscordDriver(Driver):
    name, names = "discord", ("Ann", "Bob")
    section: ClassVar[dict[str, Any]] = {"message_content_intent": True}
    BOB: ClassVar[dict[str, Any]] = {"id": "700000000000000002", "username": "bob", "discriminator": "0",
                                     "global_name": "Bob", "avatar": None}

    async def start(self) -> None:
        self.fake = FakeDiscord()
        await self.fake.start()
        self.env = {"DISCORD_BOT_TOKEN": discord_api.TOKEN, "DISCORD_API_BASE": self.fake.api_base,
                    "DISCORD_GATEWAY_URL": self.fake.gateway_url}

    async def stop(self) -> None:
        await self.fake.stop()

    def place(self, where: str) -> Place:
        return {"group": (discord_api.CHANNEL_ID, None), "thread": (discord_api.CHANNEL_ID, discord_api.THREAD_ID),
                "other": (discord_api.CHANNEL2_ID, None),
                "dm": (discord_api.DM_CHANNEL_ID, None)}[where]

    def _channel(self, where: str) -> str:
        chat_id, thread = self.place(where)
        return thread or chat_id

    async def talk(self, text: str, *, sender: int, where: str = "group") -> None:
        author = (discord_api.HUMAN, self.BOB)[sender]
        await self.fake.dispatch("MESSAGE_CREATE", self.fake.user_message(text, channel_id=self._channel(where),
                                                                          author=author))

    async def _address(self, text: str, where: str) -> None:
        if where == "dm":
            payload = self.fake.user_message(text, dm=True)
        else:
            payload = self.fake.user_message(f"<@{discord_api.APP_ID}> {text}", channel_id=self._channel(where),
                                             mentions=(discord_api.BOT_USER,))
        await self.fake.dispatch("MESSAGE_CREATE", payload)

    def shown(self, where: str) -> list[str]:
        channel = self._channel(where)
        return [m["content"] for m in self.fake.messages.values()
                if m["channel_id"] == channel and m["author"]["id"] == discord_api.APP_ID]

    def outbound(self) -> int:
        return len(self.fake.calls_to("POST", r"/channels/\d+/(messages|typing)"))


class FeishuDriver(Driver):
    name, names = "feishu", ("ou_user1", "ou_user2")
    section: ClassVar[dict[str, Any]] = {"transport": "webhook"}
    ENCRYPT_KEY, TOKEN = "gc-encrypt-key", "gc-verification-token"
    AT_BOT = (("@_user_1", feishu_api.BOT_OPEN_ID, "Hub"),)

    async def start(self) -> None:
        self.fake = FakeFeishu()
        await self.fake.start()
        self._ids = itertools.count(1)
        self.env = {"FEISHU_APP_ID": feishu_api.APP_ID, "FEISHU_APP_SECRET": feishu_api.APP_SECRET,
                    "FEISHU_DOMAIN": self.fake.domain, "FEISHU_ENCRYPT_KEY": self.ENCRYPT_KEY,
                    "FEISHU_VERIFICATION_TOKEN": self.TOKEN}

    async def stop(self) -> None:
        await self.fake.stop()

    def place(self, where: str) -> Place:
        return {"group": ("oc_gc_group", None), "thread": ("oc_gc_group", "omt_gc_topic"),
                "other": ("oc_gc_other", None), "dm": ("oc_gc_dm", None)}[where]

    async def _push(self, where: str, text: str, sender: int, mentions: tuple[tuple[str, str, str], ...]) -> None:
        chat_id, thread = self.place(where)
        event = self.fake.incoming(f"ev-gc-{next(self._ids)}", text=text, chat_id=chat_id, thread_id=thread or "",
                                   chat_type="p2p" if where == "dm" else "group", mentions=mentions,
                                   token=self.TOKEN)
        event["event"]["sender"]["sender_id"]["open_id"] = self.names[sender]
        body, headers = signed_request(self.ENCRYPT_KEY, event)
        assert self.app is not None
        url = f"http://127.0.0.1:{self.app.web_port}/feishu/webhook"
        async with aiohttp.ClientSession() as session, session.post(url, data=body, headers=headers) as resp:
            assert resp.status == 200

    async def talk(self, text: str, *, sender: int, where: str = "group") -> None:
        await self._push(where, text, sender, ())

    async def _address(self, text: str, where: str) -> None:
        if where == "dm":
            await self._push(where, text, 0, ())
        else:
            await self._push(where, f"@_user_1 {text}", 0, self.AT_BOT)

    def shown(self, where: str) -> list[str]:
        return self.fake.shown(self.place(where)[0])

    def outbound(self) -> int:
        return len([c for c in self.fake.requests("POST") if "/auth/" not in c.path])


class SlackDriver(Driver):
    name, names = "slack", (slack_users.ANN, "U0BEN")
    ROOT = "1700000000.000000"  # the thread's root, posted at start

    async def start(self) -> None:
        self.fake = FakeSlack()
        await self.fake.start()
        self.fake.open_channel("C0GROUP", "channel")
        self.fake.messages["C0GROUP"].append(Posted(self.ROOT, "U0BEN", "a thread", None, None))
        self.env = {"SLACK_BOT_TOKEN": slack_rules.BOT_TOKEN, "SLACK_APP_TOKEN": slack_rules.APP_TOKEN,
                    "SLACK_API_BASE": self.fake.api_base}

    async def stop(self) -> None:
        await self.fake.stop()

    def place(self, where: str) -> Place:
        return {"group": ("C0GROUP", None), "thread": ("C0GROUP", self.ROOT), "other": ("C0OTHER", None),
                "dm": ("D0ANN", None)}[where]

    async def _say(self, text: str, where: str, sender: int, mention: bool) -> None:
        channel, thread = self.place(where)
        envelope = await slack_users.say(self.fake, channel, text, user=self.names[sender], thread_ts=thread,
                                         mention=mention)
        await self.fake.acked(envelope)

    async def talk(self, text: str, *, sender: int, where: str = "group") -> None:
        await self._say(text, where, sender, False)

    async def _address(self, text: str, where: str) -> None:
        await self._say(text, where, 0, where != "dm")

    def shown(self, where: str) -> list[str]:
        return self.fake.shown(*self.place(where))

    def outbound(self) -> int:
        return len([c for c in self.fake.calls if c.method.startswith(("chat.", "assistant."))])


DRIVERS: dict[str, type[Driver]] = {"telegram": TelegramDriver, "discord": DiscordDriver, "feishu": FeishuDriver,
                                    "slack": SlackDriver}
