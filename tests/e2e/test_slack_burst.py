"""Twenty Slack channels answered at once, every answer streamed, through the whole app: within Slack's real
limits (chat.update and the stream's stop are Tier 3, 50 a minute per app; chat.postMessage about one a
second per channel) the fake refuses nothing and its judge sees no breach, and every answer arrives whole.
The edits window in the adapter's Capabilities is what keeps the many streams' edits under the tier."""

from __future__ import annotations

import statistics
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import App
from tests.adapters.slack.conftest import env as slack_env
from tests.adapters.slack.conftest import slack
from tests.fakes import slack_users as people
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.fakes.slack_api import FakeSlack
from tests.harness import running_app, wait_for

CHANNELS = [f"C0BURST{n:02d}" for n in range(20)]
WORDS = " ".join(f"w{n}" for n in range(120))  # about 4 s of streaming each
UPDATES = frozenset({"chat.update", "chat.appendStream", "chat.stopStream"})
SENDS = frozenset({"chat.postMessage", "chat.startStream"})

__all__ = ["slack"]


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, slack: FakeSlack) -> AsyncIterator[App]:
    fake.responder = lambda _body: Text(WORDS, delay=0.035)
    async with running_app(tmp_path, fake.base_url, ("slack",), env=slack_env(slack)) as running:
        yield running


@pytest.mark.parametrize("threaded", [False, True], ids=["chat.update", "native streams"])
async def test_twenty_channels_streamed_at_once_stay_within_slacks_limits_and_all_arrive_whole(
        app: App, slack: FakeSlack, threaded: bool) -> None:
    roots = {}
    for channel in CHANNELS:
        slack.open_channel(channel, "channel")
        roots[channel] = slack.user_message(channel, "a thread", "U0BEN") if threaded else None
    pushed = {channel: await people.say(slack, channel, "go", mention=True, thread_ts=roots[channel])
              for channel in CHANNELS}
    await wait_for(lambda: all(slack.shown(c, roots[c]) == [WORDS] and slack.settled(c) for c in CHANNELS),
                   within=30)
    assert slack.refused == [] and slack.budget_breaches == []
    first = [slack.calls_in(c, SENDS)[0].at - pushed[c].sent_at for c in CHANNELS]
    sends = sum(len(slack.calls_in(c, SENDS)) for c in CHANNELS)
    updates = sum(len(slack.calls_in(c, UPDATES)) for c in CHANNELS)
    assert sends == len(CHANNELS)  # one message per answer, never a second for the same one
    assert updates <= 50  # within the tier even though every stream wanted an edit every 1.5 s
    print(f"\nslack burst ({'threads' if threaded else 'top level'}): first text p50 "
          f"{statistics.median(first) * 1000:.0f} ms, max {max(first) * 1000:.0f} ms; "
          f"{(sends + updates) / len(CHANNELS):.2f} calls per answer ({updates} updates)")
