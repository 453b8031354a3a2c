"""The WeCom contract driver: the real adapter on the long connection against the fake WeCom; each replayed
message gets a fresh msgid, so it is no redelivery."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from adapters.wecom import WeComConfig
from adapters.wecom import adapter as wecom_adapter
from bot.messages import ChatRef, SentRef
from tests.adapters.contract.driver import ABILITIES, Driver, services
from tests.fakes import wecom_rules
from tests.fakes.serve import open_connections
from tests.fakes.wecom_ws import FakeWeCom

REPLIES = ("aibot_respond_msg", "aibot_send_msg")


class WeComDriver(Driver):
    name, limit = "wecom", wecom_adapter.WeComAdapter.capabilities.max_text
    platform_can = frozenset(ABILITIES) - {"overhears", "feedback"}  # the bot hears a group only when @mentioned
    acknowledges = False  # a callback on the long connection gets no acknowledgement to withhold

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self._offered: tuple[dict[str, Any], str] = ({}, "")

    async def start(self) -> None:
        self.fake = FakeWeCom()
        await self.fake.start()
        env = {"WECOM_BOT_ID": wecom_rules.BOT_ID, "WECOM_BOT_SECRET": wecom_rules.SECRET}
        self.adapter = wecom_adapter.create(WeComConfig(ws_url=self.fake.url), env, services([]))
        await self.adapter.start(self.inbox)

    async def stop(self) -> None:
        await self.adapter.stop()
        await self.fake.stop()

    async def inject(self, event: dict[str, Any]) -> None:
        await self.offer(event)

    async def offer(self, event: dict[str, Any]) -> None:
        body = copy.deepcopy(event)
        body["msgid"] = f"{body['msgid']}-{next(self._ids)}"
        self._offered = (body, await self.fake.push_message(body))

    async def offer_again(self) -> None:
        body, req_id = self._offered
        await self.fake.push_message(body, req_id)

    async def press(self, event: dict[str, Any], pressed: SentRef) -> None:
        body = copy.deepcopy(event)
        body["msgid"] = f"{body['msgid']}-{next(self._ids)}"
        body["event"]["template_card_event"]["task_id"] = pressed.message_id
        await self.fake.push_event(body, task_id=pressed.message_id)

    async def shown(self, chat: ChatRef) -> list[str]:
        return self.fake.shown(chat.chat_id)

    async def stream_open(self, ref: SentRef) -> bool:
        return self.fake.stream_open(ref.message_id)

    def send_attempts(self) -> int:
        return len(self.fake.calls_of(*REPLIES))

    def rate_limit_next_send(self) -> None:
        self.fake.fail(REPLIES, wecom_rules.RATE_LIMITED)

    def chat_gone(self, chat: ChatRef) -> None:
        self.fake.fail(REPLIES, wecom_rules.NO_PRIVILEGE)

    def links(self) -> int:
        return open_connections(self.fake._runner)
