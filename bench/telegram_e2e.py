"""Telegram end to end: `bothub run` (real PTB adapter, long polling) against the flood-limited fake Bot API,
beside bench/baseline_bot.py (PTB + openai: one sendMessage per answer, or one message edited at most once a
second) under the same loads.

20 chats: 8 private, 8 groups (an @mention each time) and 4 topics in 2 forum groups. Telegram's limits as
the fake enforces them: 1 message/s per chat (a burst of 3), 20 new messages per minute per group, 30/s overall.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from aiohttp import web

from bench.common import Section, run_standalone
from bench.e2e import Ask, Bot, Calls, Chat, Rig, pressing, python, steady
from bench.e2e_report import run_platform
from tests.fakes.telegram_api import BOT_USER, TOKEN, FakeTelegram
from tests.fakes.telegram_rules import FloodLimits

MENTION = f"@{BOT_USER['username']}"
PRIVATE = [Chat(str(10_001 + i), "dm") for i in range(8)]
GROUPS = [Chat(str(-100_200_001 - i), "group") for i in range(8)]
TOPICS = [Chat(f"{-100_300_001 - i // 2}/{7 + i % 2}", "thread") for i in range(4)]  # 2 forums × 2 topics
CHATS = [*PRIVATE, *GROUPS, *TOPICS]


class CountingFlood(FloodLimits):
    """The fake's flood rules, also noting which rule each 429 came from (a rejection changes no state)."""

    def __init__(self) -> None:
        super().__init__()
        self.causes: dict[str, int] = defaultdict(int)

    def check(self, chat_id: int, new_message: bool = True) -> int | None:
        retry_after = super().check(chat_id, new_message)
        if retry_after is not None:
            now = time.monotonic()
            tokens, stamp = self._buckets.get(chat_id, (float(self.per_chat_burst), now))
            kind = "group" if chat_id < 0 else "private"
            if tokens + (now - stamp) * self.per_chat_rate < 1:
                self.causes[f"per-chat ({kind})"] += 1
            if len(self._groups.get(chat_id, ())) >= self.group_per_minute:
                self.causes["group 20/min"] += 1
            if len(self._recent) >= self.global_per_second:
                self.causes["global 30/s"] += 1
        return retry_after


class TimedTelegram(FakeTelegram):
    """The strict fake Bot API, also noting every status it answers and each landed send or edit."""

    def __init__(self, rig: TelegramRig) -> None:
        super().__init__()
        self.rig = rig
        self.statuses: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self._became: dict[tuple[int, int], tuple[int, str, int]] = {}  # a message → the draft it replaced

    async def _handle(self, request: web.Request) -> web.Response:
        response = await super()._handle(request)
        self.statuses[request.match_info["method"]][response.status] += 1
        return response

    def _note(self, result: dict[str, Any]) -> None:
        chat, thread = result["chat"]["id"], result.get("message_thread_id")
        key = self._became.get((chat, result["message_id"]), (chat, result["message_id"]))
        self.rig.note(key, f"{chat}/{thread}" if thread else str(chat), result["text"])

    async def _m_sendMessageDraft(self, p: dict[str, Any]) -> bool:
        """A draft is the answer shown early: noted as the message it becomes (which replaces it)."""
        result = await super()._m_sendMessageDraft(p)
        draft = self._open_drafts[p["chat_id"]]
        self.rig.note((draft.chat_id, "draft", draft.draft_id), str(draft.chat_id), draft.texts[-1])
        return result

    async def _m_sendMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        draft = self._open_drafts.get(p.get("chat_id"))  # type: ignore[arg-type]
        result = await super()._m_sendMessage(p)
        if draft is not None and draft.became == result["message_id"]:
            self._became[(draft.chat_id, result["message_id"])] = (draft.chat_id, "draft", draft.draft_id)
        self._note(result)
        return result

    async def _m_editMessageText(self, p: dict[str, Any]) -> dict[str, Any]:
        result = await super()._m_editMessageText(p)
        self._note(result)
        return result


class TelegramRig(Rig):
    platform = "telegram"

    def __init__(self) -> None:
        super().__init__()
        self.fake = TimedTelegram(self)
        self.flood = CountingFlood()
        self.fake.flood = self.flood

    async def start(self) -> None:
        await self.fake.start()
        for chat in CHATS:
            chat_id = int(chat.where.split("/")[0])
            self.fake.open_chat(chat_id, "private" if chat.kind == "dm" else "supergroup", forum=chat.kind == "thread")

    async def stop(self) -> None:
        await self.fake.stop()

    def env(self) -> dict[str, str]:
        return {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": self.fake.api_base}

    def ready(self) -> bool:
        return "getUpdates" in self.fake.statuses

    async def inject(self, ask: Ask) -> None:
        chat_id, _, thread = ask.chat.where.partition("/")
        dm = ask.chat.kind == "dm"
        self.fake.inject_message(int(chat_id), ask.text if dm else f"{MENTION} {ask.text}",
                                 chat_type="private" if dm else "supergroup",
                                 thread_id=int(thread) if thread else None)

    def calls(self) -> Calls:
        return Calls.counted(self.fake.statuses, ("getUpdates", "getMe", "deleteWebhook", "setMyCommands"))

    def rate_limit_causes(self) -> dict[str, int]:
        return dict(self.flood.causes)


BOTS = [Bot("bothub", python("bot", "run")), Bot("baseline", python("bench.baselines.telegram")),
        Bot("streaming baseline", python("bench.baselines.telegram", "--stream"))]


async def run() -> Section:
    return await run_platform("Telegram end to end: flood-limited fake Bot API, 20 chats (8 private, 8 groups, "
                              "4 forum topics)", TelegramRig, BOTS, steady(CHATS), pressing(CHATS))


if __name__ == "__main__":
    run_standalone(run)
