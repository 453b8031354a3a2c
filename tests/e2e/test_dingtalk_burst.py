"""Forty-five one-to-one chats answered at once, every answer streamed into an AI card, through the whole app: DingTalk
limits an app's calls per second per interface (20 card creations, 20 streaming updates, 20 whole-card PUTs), so
the first cards of the burst open at once and the rest within the next second; the fake refuses nothing and its
judge sees no breach, and every answer arrives whole. The sends and edits windows in the adapter's Capabilities
are what keep the burst under each interface's limit."""

from __future__ import annotations

import asyncio
import statistics
import time

from bot.app import App
from tests.e2e.test_dingtalk_e2e import app, dingtalk_fake
from tests.fakes.dingtalk_api import APP_QPS, FakeDingTalk
from tests.fakes.dingtalk_gateway import ROBOT_TOPIC
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.harness import wait_for

STAFF = [f"staff-burst-{n:02d}" for n in range(45)]  # more chats than card creations allowed in a second
WORDS = " ".join(f"w{n}" for n in range(40))  # about 1.5 s of streaming each
APIS = ("/card/instances/createAndDeliver", "/card/streaming", "/card/instances")

__all__ = ["app", "dingtalk_fake"]


def busiest_second(server: FakeDingTalk, path: str) -> int:
    """The most calls to one API within any second."""
    times = sorted(c.at for c in server.calls if c.path == f"/v1.0{path}")
    return max((sum(1 for t in times[i:] if t - start < 1.0) for i, start in enumerate(times)), default=0)


def finished(server: FakeDingTalk, staff: str) -> list[str]:
    return [c.params["msgContent"] for c in server.cards.values()
            if c.chat_id == staff and c.params.get("flowStatus") == "3"]


async def test_forty_five_chats_streamed_at_once_stay_within_each_apis_calls_per_second_and_all_arrive_whole(
        app: App, dingtalk_fake: FakeDingTalk, fake: FakeOpenAI) -> None:
    fake.responder = lambda _body: Text(WORDS, delay=0.035)
    frames = [dingtalk_fake.robot_frame({
        "msgId": f"msg-burst-{n}", "conversationType": "1", "conversationId": f"cid-of-{staff}",
        "senderStaffId": staff, "senderNick": "Ann", "isInAtList": True, "msgtype": "text", "text": {"content": "go"}})
        for n, staff in enumerate(STAFF)]
    pushed = dict.fromkeys(STAFF, time.monotonic())
    await asyncio.gather(*(dingtalk_fake.push(ROBOT_TOPIC, frame) for frame in frames))
    await wait_for(lambda: all(finished(dingtalk_fake, s) == [WORDS] for s in STAFF), within=30)
    assert dingtalk_fake.budget_breaches == []
    assert all(busiest_second(dingtalk_fake, api) <= APP_QPS for api in APIS)
    creations = [c for c in dingtalk_fake.calls if c.path.endswith("createAndDeliver")]
    assert len(creations) == len(STAFF)  # one card per answer, never a second for the same one
    first = {c.body["openSpaceId"].rsplit(".", 1)[1]: c.at for c in reversed(creations)}
    waits = sorted(first[s] - pushed[s] for s in STAFF)
    calls = sum(1 for c in dingtalk_fake.calls if "/card/" in c.path)
    print(f"\ndingtalk burst: first card p50 {statistics.median(waits) * 1000:.0f} ms, max {waits[-1] * 1000:.0f} ms;"
          f" {calls / len(STAFF):.2f} card calls per answer")
