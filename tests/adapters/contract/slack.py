"""The Slack driver: the real adapter in Socket Mode against the fake Slack (Web API + Socket Mode) on
127.0.0.1; payloads arrive as envelopes and must be acked, as Slack requires."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from adapters.slack import SlackConfig
from adapters.slack import adapter as slack_adapter
from bot.messages import ChatRef, SentRef
from tests.adapters.contract.driver import ABILITIES, Driver, services
from tests.fakes import slack_api
from tests.fakes import slack_users as people
from tests.fakes.serve import open_connections
from tests.fakes.slack_rules import APP_TOKEN, BOT_TOKEN
from tests.fakes.slack_socket import Envelope


def env(fake: slack_api.FakeSlack) -> dict[str, str]:
    return {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN, "SLACK_API_BASE": fake.api_base}


def channel_kind(channel: str) -> str:
    return {"D": "im", "C": "channel", "G": "group"}[channel[0]]


def open_for(fake: slack_api.FakeSlack, kind: str, payload: dict[str, Any]) -> None:
    """Make the payload's channel exist, and the user's message in it (a reply in its thread needs it)."""
    if kind == "events_api":
        event = payload["event"]
        fake.open_channel(event["channel"], channel_kind(event["channel"]))
        if not any(m.ts == event["ts"] for m in fake.messages[event["channel"]]):
            fake.messages[event["channel"]].append(
                slack_api.Posted(event["ts"], event["user"], event.get("text", ""), None, event.get("thread_ts")))
    elif kind == "slash_commands":
        fake.open_channel(payload["channel_id"], channel_kind(payload["channel_id"]))


class SlackDriver(Driver):
    name, limit, platform_can = "slack", slack_adapter.SlackAdapter.capabilities.max_text, frozenset(ABILITIES)

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self._offered: tuple[str, dict[str, Any]] = ("", {})
        self._last: Envelope | None = None

    async def start(self) -> None:
        self.fake = slack_api.FakeSlack()
        await self.fake.start()
        self.adapter = slack_adapter.create(SlackConfig(), env(self.fake), services([]))
        await self.adapter.start(self.inbox)

    async def stop(self) -> None:
        await self.adapter.stop()
        await self.fake.stop()

    async def inject(self, event: dict[str, Any]) -> None:
        await self.offer(event)
        assert self._last is not None
        await self.fake.acked(self._last)

    async def offer(self, event: dict[str, Any]) -> None:
        payload = copy.deepcopy(event["payload"])
        if "event_id" in payload:  # a fresh id, so a replayed payload is not a redelivery
            payload["event_id"] = f"{payload['event_id']}-{next(self._ids)}"
        open_for(self.fake, event["type"], payload)
        self._offered = (event["type"], payload)
        await self.offer_again()

    async def offer_again(self) -> None:
        """Slack sends an envelope not acked again, with the same event id."""
        self._last = await self.fake.push(*self._offered)

    def confirmed(self) -> bool:
        return self._last is None or self._last.done.is_set()

    async def press(self, event: dict[str, Any], pressed: SentRef) -> None:
        payload = copy.deepcopy(event["payload"])
        payload["container"]["message_ts"] = payload["message"]["ts"] = pressed.message_id
        await self.fake.acked(await self.fake.push(event["type"], payload))

    async def shown(self, chat: ChatRef) -> list[str]:
        return self.fake.shown(chat.chat_id, chat.thread_id)

    async def rate(self, answer: SentRef, good: bool) -> None:
        await self.fake.acked(await people.rate(self.fake, answer.chat.chat_id, answer.message_id, good))

    async def stream_open(self, ref: SentRef) -> bool:
        return self.fake.message(ref.chat.chat_id, ref.message_id).streaming

    def send_attempts(self) -> int:
        return len(self.fake.calls_of("chat.postMessage"))

    def rate_limit_next_send(self) -> None:
        self.fake.rate_limit("chat.postMessage")

    def chat_gone(self, chat: ChatRef) -> None:
        self.fake.gone(chat.chat_id)

    def links(self) -> int:
        return open_connections(self.fake._runner)
