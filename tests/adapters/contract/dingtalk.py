"""The DingTalk contract driver: the real adapter in Stream mode (the dingtalk-stream SDK over a WebSocket)
against the fake gateway and OpenAPI; each replayed robot message gets a fresh msgId, so it is no
redelivery."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from adapters.dingtalk import DingTalkConfig
from adapters.dingtalk import adapter as dingtalk_adapter
from bot.messages import ChatRef, SentRef
from tests.adapters.contract.driver import ABILITIES, Driver, services
from tests.fakes import dingtalk_api
from tests.fakes.dingtalk_gateway import CARD_TOPIC, ROBOT_TOPIC
from tests.fakes.serve import open_connections

CREATE = "/card/instances/createAndDeliver"


class DingTalkDriver(Driver):
    name, limit = "dingtalk", dingtalk_api.TEXT_LIMIT
    platform_can = frozenset(ABILITIES) - {"overhears", "feedback"}  # a robot hears a group only when @mentioned

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self._offered: tuple[dict[str, Any], str] = ({}, "")

    async def start(self) -> None:
        self.fake = dingtalk_api.FakeDingTalk()
        await self.fake.start()
        env = {"DINGTALK_CLIENT_ID": dingtalk_api.CLIENT_ID, "DINGTALK_CLIENT_SECRET": dingtalk_api.CLIENT_SECRET}
        settings = DingTalkConfig(api_base=self.fake.base, oapi_base=self.fake.base)
        self.adapter = dingtalk_adapter.create(settings, env, services([]))
        await self.adapter.start(self.inbox)

    async def stop(self) -> None:
        await self.adapter.stop()
        await self.fake.stop()

    async def inject(self, event: dict[str, Any]) -> None:
        await self.offer(event)
        await self.fake.until_acked(self._offered[1])

    async def offer(self, event: dict[str, Any]) -> None:
        data = self.fake.robot_frame(event)
        data["msgId"] = f"{data['msgId']}-{next(self._ids)}"
        self._offered = (data, await self.fake.push(ROBOT_TOPIC, data))

    async def offer_again(self) -> None:
        """DingTalk pushes a frame not ACKed with code 200 again, under its messageId."""
        data, frame_id = self._offered
        await self.fake.push(ROBOT_TOPIC, data, frame_id=frame_id)

    def confirmed(self) -> bool:
        frame_id = self._offered[1]
        return not frame_id or self.fake.acked(frame_id) is not None

    async def press(self, event: dict[str, Any], pressed: SentRef) -> None:
        data = copy.deepcopy(event)
        data["outTrackId"] = pressed.message_id
        await self.fake.until_acked(await self.fake.push(CARD_TOPIC, data))

    async def shown(self, chat: ChatRef) -> list[str]:
        return self.fake.shown(chat.chat_id)

    async def stream_open(self, ref: SentRef) -> bool:
        return self.fake.cards[ref.message_id].params.get("flowStatus") == "2"

    def send_attempts(self) -> int:
        return len(self.fake.calls_to(CREATE))

    def rate_limit_next_send(self) -> None:
        self.fake.fail(CREATE, 429, "Throttling")

    def chat_gone(self, chat: ChatRef) -> None:
        self.fake.fail(CREATE, 403, "chatbot.notInGroup")

    def links(self) -> int:
        return open_connections(self.fake._runner)
