"""Slack end to end: `bothub run` (real slack_sdk adapter, Socket Mode + Web API) against the fake Slack with its
limits (1 message per second per channel in bursts of at most 8 in 5 s, method tiers), beside
bench/baselines/slack.py (slack_sdk + openai: one chat.postMessage per answer, or one message edited with
chat.update at most once a second) under the same loads.

20 chats: 8 DMs, 8 channels (an app mention each time) and 4 threads in 2 channels (mentions in the thread,
where bothub streams natively).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from aiohttp import web

from bench.common import Section, run_standalone
from bench.e2e import Ask, Bot, Calls, Chat, Rig, pressing, python, steady
from bench.e2e_report import run_platform
from tests.fakes import slack_users as people
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_rules import APP_TOKEN, BOT_TOKEN

DMS = [Chat(f"D0DM{i:04d}", "dm") for i in range(8)]
CHANNELS = [Chat(f"C0CH{i:04d}", "group") for i in range(8)]
THREADED = ("C0TH0000", "C0TH0001")
THREADS = [Chat(f"{THREADED[i // 2]}/{i % 2}", "thread") for i in range(4)]  # channel/n: its n-th thread
CHATS = [*DMS, *CHANNELS, *THREADS]
SETUP = frozenset({"auth.test", "apps.connections.open"})


class TimedSlack(FakeSlack):
    """The strict fake Slack, also noting each status it answers and every bot message as it lands or grows."""

    def __init__(self, rig: SlackRig) -> None:
        super().__init__()
        self.rig = rig
        self.statuses: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        response = await super()._handle(request)
        self.statuses[request.match_info["method"]][response.status] += 1
        return response

    def _note(self, answer: dict[str, Any]) -> dict[str, Any]:
        channel, ts = answer["channel"], answer["ts"]
        posted = self.message(channel, ts)
        self.rig.note((channel, ts), f"{channel}/{posted.thread_ts}" if posted.thread_ts else channel, posted.text)
        return answer

    def m_chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._note(super().m_chat_postMessage(params))

    def m_chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._note(super().m_chat_update(params))

    def m_chat_startStream(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._note(super().m_chat_startStream(params))

    def m_chat_appendStream(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._note(super().m_chat_appendStream(params))

    def m_chat_stopStream(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._note(super().m_chat_stopStream(params))


class SlackRig(Rig):
    platform = "slack"

    def __init__(self) -> None:
        super().__init__()
        self.fake = TimedSlack(self)
        self.roots: dict[str, str] = {}  # "channel/n" → the thread's root ts

    async def start(self) -> None:
        await self.fake.start()
        for chat in THREADS:
            channel = chat.where.split("/")[0]
            self.fake.open_channel(channel, "channel")
            self.roots[chat.where] = self.fake.user_message(channel, "a thread for the benchmark", "U0BEN")

    async def stop(self) -> None:
        await self.fake.stop()

    def env(self) -> dict[str, str]:
        return {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN, "SLACK_API_BASE": self.fake.api_base}

    def ready(self) -> bool:
        return self.fake.connected.is_set()

    async def inject(self, ask: Ask) -> None:
        if ask.chat.kind == "thread":
            channel = ask.chat.where.split("/")[0]
            await people.say(self.fake, channel, ask.text, mention=True, thread_ts=self.roots[ask.chat.where])
        else:
            await people.say(self.fake, ask.chat.where, ask.text, mention=ask.chat.kind == "group")

    def calls(self) -> Calls:
        return Calls.counted(self.fake.statuses, SETUP)


BOTS = [Bot("bothub", python("bot", "run")), Bot("baseline", python("bench.baselines.slack")),
        Bot("streaming baseline", python("bench.baselines.slack", "--stream"))]


TIER_NOTE = ("chat.update is a Tier 3 method (50 per minute per app for the whole workspace, every channel sharing "
             "it), as is the stream's stop; the adapter declares it as an edits window (Capabilities.edit_window), "
             "so under the pressing load streams edit less often and, with the window short, answers are posted "
             "whole instead of streamed. Threads stream with chat.appendStream (Tier 4).")


async def run() -> Section:
    section = await run_platform("Slack end to end: fake Slack with its per-channel and tier limits, 20 chats (8 DMs, "
                                 "8 channels, 4 threads)", SlackRig, BOTS, steady(CHATS), pressing(CHATS))
    section.notes.append(TIER_NOTE)
    return section


if __name__ == "__main__":
    run_standalone(run)
