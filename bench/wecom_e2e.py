"""WeCom end to end: `bothub run` (the AI bot's long connection; answers in WeCom's stream messages) against the
strict fake with WeCom's limits (30 messages a minute into one conversation, stream refreshes not counted, a
stream finished within 6 minutes), beside bench/baselines/wecom.py (the thinnest bot on the same protocol: one
finished stream per answer, or a stream refreshed at most once a second) under the same loads.

20 chats: 10 single chats and 10 groups (an @mention each time; WeCom delivers nothing else in a group).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

from bench.common import Section, run_standalone
from bench.e2e import Ask, Bot, Calls, Chat, Rig, pressing, python, steady
from bench.e2e_report import run_platform
from tests.fakes import wecom_rules
from tests.fakes.wecom_ws import FakeWeCom

CHATS = [*(Chat(f"user-bench-{i}", "dm") for i in range(10)), *(Chat(f"wrkBench{i}", "group") for i in range(10))]
UNCOUNTED = frozenset({"aibot_subscribe", "ping"})
SHOWING = frozenset({"aibot_respond_msg", "aibot_send_msg", "aibot_respond_update_msg"})


class TimedWeCom(FakeWeCom):
    """The strict fake with every answer code counted and each bot message noted as it lands or changes."""

    def __init__(self, rig: WeComRig) -> None:
        super().__init__()
        self.rig = rig
        self.codes: dict[int, int] = defaultdict(int)

    def reply_frame(self, cmd: str, rid: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        code, extra = super().reply_frame(cmd, rid, body)
        if cmd not in UNCOUNTED:
            self.codes[code] += 1
        if code == wecom_rules.OK and cmd in SHOWING:
            key = (body.get("stream") or {}).get("id") or (body.get("template_card") or {}).get("task_id")
            item = self.item(key) if key else (self.items[-1] if self.items else None)
            if item is not None:
                self.rig.note(item.id, item.chat, item.text)
        return code, extra


class WeComRig(Rig):
    platform = "wecom"

    def __init__(self) -> None:
        super().__init__()
        self.fake = TimedWeCom(self)
        self._ids = itertools.count(1)

    async def start(self) -> None:
        await self.fake.start()

    async def stop(self) -> None:
        await self.fake.stop()

    def env(self) -> dict[str, str]:
        return {"WECOM_BOT_ID": wecom_rules.BOT_ID, "WECOM_BOT_SECRET": wecom_rules.SECRET,
                "WECOM_WS_URL": self.fake.url}

    def ready(self) -> bool:
        return self.fake.subscribed.is_set()

    async def inject(self, ask: Ask) -> None:
        group = ask.chat.kind == "group"
        body: dict[str, Any] = {"msgid": f"msg-bench-{next(self._ids)}", "aibotid": wecom_rules.BOT_ID,
                                "chattype": "group" if group else "single", "msgtype": "text",
                                "from": {"userid": "user-asker" if group else ask.chat.where},
                                "text": {"content": f"@助手 {ask.text}" if group else ask.text}}
        if group:
            body["chatid"] = ask.chat.where
        await self.fake.push_message(body)

    def calls(self) -> Calls:
        codes = self.fake.codes
        return Calls(sum(codes.values()), codes[wecom_rules.RATE_LIMITED],
                     sum(n for code, n in codes.items() if code not in (wecom_rules.OK, wecom_rules.RATE_LIMITED)))


BOTS = [Bot("bothub", python("bot", "run")), Bot("baseline", python("bench.baselines.wecom")),
        Bot("streaming baseline", python("bench.baselines.wecom", "--stream"))]


async def run() -> Section:
    return await run_platform("WeCom end to end: fake AI-bot long connection with WeCom's limits, 20 chats "
                              "(10 single, 10 groups)", WeComRig, BOTS, steady(CHATS), pressing(CHATS))


if __name__ == "__main__":
    run_standalone(run)
