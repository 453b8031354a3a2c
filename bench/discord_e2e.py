"""Discord end to end: `bothub run` (real discord.py adapter, gateway + REST) against the fake Discord with its
per-route limits (5 requests per 5 s per channel and route), beside bench/baselines/discord.py (discord.py +
openai: one send per answer, or one message edited at most once a second) under the same loads.

20 chats: 6 guild channels and 6 threads (an @mention each time), 8 DMs.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from aiohttp import web

from bench.common import Section, run_standalone
from bench.e2e import Ask, Bot, Calls, Chat, Rig, pressing, python, steady
from bench.e2e_report import run_platform
from tests.fakes.discord_api import (
    APP_ID,
    BOT_USER,
    CHANNEL_ID,
    DM_CHANNEL_ID,
    THREAD2_ID,
    THREAD_ID,
    TOKEN,
    FakeDiscord,
)

EXTRA_CHANNELS = tuple(f"81000000000000{i:04d}" for i in range(5))
EXTRA_THREADS = tuple((f"82000000000000{i:04d}", EXTRA_CHANNELS[i]) for i in range(4))
EXTRA_DMS = tuple(f"83000000000000{i:04d}" for i in range(7))
CHATS = [*(Chat(c, "group") for c in (CHANNEL_ID, *EXTRA_CHANNELS)),
         *(Chat(t, "thread") for t in (THREAD_ID, THREAD2_ID, *(t for t, _ in EXTRA_THREADS))),
         *(Chat(d, "dm") for d in (DM_CHANNEL_ID, *EXTRA_DMS))]
GUILD_READY = 2.5  # discord.py waits 2 s after the last GUILD_CREATE before it is ready


class TimedDiscord(FakeDiscord):
    """The strict fake Discord, also noting each status it answers and every message as it lands or changes."""

    def __init__(self, rig: DiscordRig) -> None:
        super().__init__()
        self.rig = rig
        self.statuses: dict[int, int] = defaultdict(int)
        self.extra_channels, self.extra_threads = EXTRA_CHANNELS, EXTRA_THREADS
        self.dm_channels |= set(EXTRA_DMS)

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        response = await super()._rest(request)
        if request.path.startswith(("/api/v10/channels/", "/api/v10/webhooks/", "/api/v10/interactions/")):
            self.statuses[response.status] += 1
        return response

    def _note(self, message: dict) -> None:
        self.rig.note(message["id"], message["channel_id"], message["content"])

    def _store(self, channel_id: str, body: dict, flags: int = 0, **extra: Any) -> dict:
        message = super()._store(channel_id, body, flags, **extra)
        self._note(message)
        return message

    def _apply(self, message_id: str, body: dict) -> dict:
        message = super()._apply(message_id, body)
        self._note(message)
        return message


class DiscordRig(Rig):
    platform = "discord"

    def __init__(self) -> None:
        super().__init__()
        self.fake = TimedDiscord(self)

    async def start(self) -> None:
        await self.fake.start()

    async def stop(self) -> None:
        await self.fake.stop()

    def env(self) -> dict[str, str]:
        return {"DISCORD_BOT_TOKEN": TOKEN, "DISCORD_API_BASE": self.fake.api_base,
                "DISCORD_GATEWAY_URL": self.fake.gateway_url}

    def ready(self) -> bool:
        return self.fake.ready.is_set()

    async def inject(self, ask: Ask) -> None:
        if ask.chat.kind == "dm":
            payload = self.fake.user_message(ask.text, channel_id=ask.chat.where, dm=True)
        else:
            payload = self.fake.user_message(f"<@{APP_ID}> {ask.text}", channel_id=ask.chat.where,
                                             mentions=(BOT_USER,))
        await self.fake.dispatch("MESSAGE_CREATE", payload)

    def calls(self) -> Calls:
        statuses = self.fake.statuses
        return Calls(sum(statuses.values()), statuses[429],
                     sum(n for status, n in statuses.items() if 400 <= status < 500 and status != 429))


BOTS = [Bot("bothub", python("bot", "run"), GUILD_READY),
        Bot("baseline", python("bench.baselines.discord"), GUILD_READY),
        Bot("streaming baseline", python("bench.baselines.discord", "--stream"), GUILD_READY)]


async def run() -> Section:
    return await run_platform("Discord end to end: fake Discord with per-route limits, 20 chats (6 channels, "
                              "6 threads, 8 DMs)", DiscordRig, BOTS, steady(CHATS), pressing(CHATS))


if __name__ == "__main__":
    run_standalone(run)
