"""Feishu end to end: `bothub run` (long connection; cards, CardKit streaming once an answer runs long) against the fake
open platform with Feishu's published frequency limits (tests/fakes/feishu_limits.py), beside
bench/baselines/feishu.py (lark-oapi + openai: one text reply per answer, or one text message edited at most once a
second) under the same loads.

20 chats: 8 one-to-one, 8 groups (an @mention each time) and 4 topics in 2 topic groups.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from aiohttp import web

from bench.common import Section, run_standalone
from bench.e2e import Ask, Bot, Calls, Chat, Rig, pressing, python, steady
from bench.e2e_report import run_platform
from tests.fakes.feishu_api import APP_ID, APP_SECRET, BOT_OPEN_ID, RATE_LIMITED, FakeFeishu, _visible_text
from tests.fakes.feishu_limits import FeishuLimits

AT_BOT = (("@_user_1", BOT_OPEN_ID, "Hub"),)
CHATS = [*(Chat(f"oc_p2p_{i}", "dm") for i in range(8)), *(Chat(f"oc_group_{i}", "group") for i in range(8)),
         *(Chat(f"oc_topics_{i // 2}/omt_{i}", "thread") for i in range(4))]


class TimedFeishu(FakeFeishu):
    """The strict fake open platform with Feishu's limits on, noting every status and each bot message as it
    lands or changes (a card entity's streamed content shows in the message that carries it)."""

    def __init__(self, rig: FeishuRig) -> None:
        super().__init__()
        self.rig = rig
        self.limits = FeishuLimits()
        self.statuses: dict[int, int] = defaultdict(int)
        self.where: dict[str, str] = {}  # incoming message id → where its answer belongs
        self._carrier: dict[str, str] = {}  # card entity id → the message that shows it

    async def _api(self, request: web.Request) -> web.Response:
        parts = request.path.removeprefix("/open-apis/").split("/")
        if parts[:2] == ["bot", "v3"] or request.method == "GET":
            return await super()._api(request)
        if not self.limits.allow(*await self._limited(request, parts)):
            self.statuses[429] += 1
            return self._error(RATE_LIMITED, "request trigger frequency limit", 429, reset=1)
        response = await super()._api(request)
        self.statuses[response.status] += 1
        if response.status == 200 and isinstance(response.body, bytes):
            self._landed(request.method, parts, json.loads(response.body), await self.read_body(request))
        return response

    async def read_body(self, request: web.Request) -> Any:  # type: ignore[override]
        """Read once: the limit check needs a send's chat before the fake handles the request."""
        if "body" not in request:
            request["body"] = await FakeFeishu.read_body(request)
        return request["body"]

    async def _limited(self, request: web.Request, parts: list[str]) -> tuple[str, str | None]:
        if parts[:2] == ["cardkit", "v1"]:  # id_convert names a message, not a card: only the app's limit
            return "cardkit", parts[3] if len(parts) > 3 and parts[3] != "id_convert" else None
        if request.method == "POST" and len(parts) == 3:
            return "send", ((await self.read_body(request)) or {}).get("receive_id")
        if request.method == "POST" and parts[-1] == "reply":
            return "send", self.messages.get(parts[3], {}).get("chat_id")
        return "update", parts[3] if len(parts) > 3 else None

    def _landed(self, method: str, parts: list[str], answer: dict[str, Any], body: Any) -> None:
        if answer.get("code"):
            return
        if parts[3:] == ["id_convert"]:  # the message shows the card entity from now on
            self._carrier[answer["data"]["card_id"]] = body["message_id"]
            return
        if parts[:3] == ["im", "v1", "messages"] and method == "POST":
            message_id = answer["data"]["message_id"]
            content = json.loads(self.messages[message_id]["content"])
            if content.get("type") == "card":
                self._carrier[content["data"]["card_id"]] = message_id
        elif parts[:3] == ["im", "v1", "messages"]:
            message_id = parts[3]
        elif parts[:2] == ["cardkit", "v1"] and len(parts) > 3 and parts[3] in self._carrier:
            message_id = self._carrier[parts[3]]
        else:
            return
        message = self.messages[message_id]
        where = self.where.get(message["reply_to"], message["chat_id"])
        self.rig.note(message_id, where, _visible_text(message, self.cards))


class FeishuRig(Rig):
    platform = "feishu"

    def __init__(self) -> None:
        super().__init__()
        self.fake = TimedFeishu(self)
        self._events = 0

    async def start(self) -> None:
        await self.fake.start()
        for chat in CHATS:
            chat_id = chat.where.split("/")[0]
            self.fake.chat_modes[chat_id] = {"dm": "p2p", "group": "group", "thread": "topic"}[chat.kind]

    async def stop(self) -> None:
        await self.fake.stop()

    def env(self) -> dict[str, str]:
        return {"FEISHU_APP_ID": APP_ID, "FEISHU_APP_SECRET": APP_SECRET, "FEISHU_DOMAIN": self.fake.domain}

    def ready(self) -> bool:
        return self.fake.ws_connected.is_set()

    async def inject(self, ask: Ask) -> None:
        self._events += 1
        chat_id, _, thread = ask.chat.where.partition("/")
        dm = ask.chat.kind == "dm"
        event = self.fake.incoming(f"ev{self._events}", text=ask.text if dm else f"@_user_1 {ask.text}",
                                   chat_type="p2p" if dm else "group", chat_id=chat_id,
                                   mentions=() if dm else AT_BOT, thread_id=thread)
        self.fake.where[event["event"]["message"]["message_id"]] = ask.chat.where
        await self.fake.push_ws_event(event)

    def calls(self) -> Calls:
        statuses = self.fake.statuses
        return Calls(sum(statuses.values()), statuses[429],
                     sum(n for status, n in statuses.items() if 400 <= status < 500 and status != 429))

    def rate_limit_causes(self) -> dict[str, int]:
        return dict(self.fake.limits.causes)


BOTS = [Bot("bothub", python("bot", "run")), Bot("baseline", python("bench.baselines.feishu")),
        Bot("streaming baseline", python("bench.baselines.feishu", "--stream"))]


async def run() -> Section:
    return await run_platform("Feishu end to end: fake open platform with Feishu's frequency limits, long "
                              "connection, 20 chats (8 one-to-one, 8 groups, 4 topics)", FeishuRig, BOTS,
                              steady(CHATS), pressing(CHATS))


if __name__ == "__main__":
    run_standalone(run)
