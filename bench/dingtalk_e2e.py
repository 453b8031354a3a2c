"""DingTalk end to end: `bothub run` (Stream mode on the dingtalk-stream SDK; AI cards streamed in place) against the
fake gateway and OpenAPI with DingTalk's limits (an app's 20 calls a second to each server API, a robot's 20 new
messages a minute into one group), beside bench/baselines/dingtalk.py (the SDK as its examples use it: one
Markdown reply per answer by the session webhook, or one AI card streamed at most once a second) under the same
loads.

20 chats: 10 one-to-one and 10 groups (an @mention each time; DingTalk delivers nothing else in a group).
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from typing import Any

from aiohttp import web

from bench.common import Section, run_standalone
from bench.e2e import Ask, Bot, Calls, Chat, Rig, pressing, python, steady
from bench.e2e_report import run_platform
from tests.fakes.dingtalk_api import CLIENT_ID, CLIENT_SECRET, QPS_REFUSED, FakeDingTalk
from tests.fakes.dingtalk_gateway import ROBOT_TOPIC

CHATS = [*(Chat(f"staff-bench-{i}", "dm") for i in range(10)), *(Chat(f"cid-bench-{i}", "group") for i in range(10))]


class TimedDingTalk(FakeDingTalk):
    """The strict fake with every status counted and each bot message noted as it lands or changes."""

    def __init__(self, rig: DingTalkRig) -> None:
        super().__init__()
        self.rig = rig
        self.statuses: dict[int, int] = defaultdict(int)
        self._noted = 0

    async def _openapi(self, request: web.Request) -> web.Response:
        response = await super()._openapi(request)
        self._count(response)
        if response.status == 200:
            body = self.calls[-1].body
            track = body.get("outTrackId") if isinstance(body, dict) else None
            if isinstance(track, str) and track in self.cards:
                card = self.cards[track]
                self.rig.note(track, card.chat_id, card.params.get("msgContent", ""))
            self._note_new()
        return response

    async def _session_webhook(self, request: web.Request) -> web.Response:
        response = await super()._session_webhook(request)
        self._count(response)
        self._note_new()
        return response

    def _count(self, response: web.Response) -> None:
        answer = json.loads(response.body) if isinstance(response.body, bytes) else {}
        refused = response.status == 429 or answer.get("errcode") == 130101 or answer.get("code") == QPS_REFUSED
        self.statuses[429 if refused else response.status] += 1

    def _note_new(self) -> None:
        for shown in self.shown_messages[self._noted:]:
            if shown.kind != "card":
                self.rig.note(id(shown), shown.chat_id, shown.content)
        self._noted = len(self.shown_messages)


class DingTalkRig(Rig):
    platform = "dingtalk"

    def __init__(self) -> None:
        super().__init__()
        self.fake = TimedDingTalk(self)
        self._ids = itertools.count(1)

    async def start(self) -> None:
        await self.fake.start()

    async def stop(self) -> None:
        await self.fake.stop()

    def env(self) -> dict[str, str]:
        return {"DINGTALK_CLIENT_ID": CLIENT_ID, "DINGTALK_CLIENT_SECRET": CLIENT_SECRET,
                "DINGTALK_API_BASE": self.fake.base, "DINGTALK_OAPI_BASE": self.fake.base}

    def ready(self) -> bool:
        return self.fake.ws_connected.is_set()

    async def inject(self, ask: Ask) -> None:
        group = ask.chat.kind == "group"
        data: dict[str, Any] = {
            "msgId": f"msg-bench-{next(self._ids)}", "conversationType": "2" if group else "1",
            "conversationId": ask.chat.where if group else f"cid-of-{ask.chat.where}",
            "senderStaffId": "staff-asker" if group else ask.chat.where, "senderNick": "Asker",
            "isInAtList": True, "msgtype": "text", "text": {"content": f" {ask.text}"}}
        await self.fake.push(ROBOT_TOPIC, self.fake.robot_frame(data))

    def calls(self) -> Calls:
        statuses = self.fake.statuses
        return Calls(sum(statuses.values()), statuses[429],
                     sum(n for status, n in statuses.items() if 400 <= status < 500 and status != 429))


BOTS = [Bot("bothub", python("bot", "run")), Bot("baseline", python("bench.baselines.dingtalk")),
        Bot("streaming baseline", python("bench.baselines.dingtalk", "--stream"))]


async def run() -> Section:
    return await run_platform("DingTalk end to end: fake Stream gateway and OpenAPI with DingTalk's limits, Stream "
                              "mode, 20 chats (10 one-to-one, 10 groups)", DingTalkRig, BOTS,
                              steady(CHATS), pressing(CHATS))


if __name__ == "__main__":
    run_standalone(run)
