"""Feedback on answers in Slack, through the whole app (real slack_sdk in Socket Mode against the fake Slack, the
fake LLM, the dashboard's web server): an answer ends with Block Kit's feedback_buttons naming its node in the
tree; a press is stored on that node, one rating per person (a second press replaces the first), with no message
of its own; the dashboard's tree shows the counts; a press on an answer that is gone gets a polite line."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.app import App
from bot.store import Tally
from tests.adapters.slack.conftest import env as slack_env
from tests.adapters.slack.conftest import slack
from tests.e2e.test_slack_e2e import answered
from tests.fakes import slack_users as people
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_rules import MAIN_APP
from tests.harness import running_app, wait_for

DM, CHANNEL, BEN = "D0ANN", "C0GENERAL", "U0BEN"
PASSWORD = "feedback dashboard password"

__all__ = ["slack"]  # the fake Slack fixture, the adapter tests' own


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, slack: FakeSlack) -> AsyncIterator[App]:
    env = {**slack_env(slack), "BOTHUB_ADMIN_PASSWORD": PASSWORD}
    config = {"server": {"enabled": True, "port": 0}}
    async with running_app(tmp_path, fake.base_url, ("slack",), env=env, config=config) as running:
        yield running


def node_of(slack: FakeSlack, channel: str, ts: str) -> tuple[str, str]:
    """(conversation, message) the answer's feedback names: both buttons name the same node."""
    element = people.feedback_of(slack, channel, ts)
    up, down = element["positive_button"]["value"].split(), element["negative_button"]["value"].split()
    assert up[:2] == ["/feedback", "up"] and down[:2] == ["/feedback", "down"] and up[2:] == down[2:]
    return up[2], up[3]


async def tallied(app: App, chat: str, conv: str, expected: dict[str, Tally], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while (found := await app.store.feedback.tallies(chat, conv)) != expected:
        assert time.monotonic() < deadline, f"feedback {found} is not {expected}"
        await asyncio.sleep(0.02)


async def test_a_press_rates_the_answers_node_once_per_person_and_the_dashboards_tree_counts_it(
        app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    fake.script(Text("forty-two"))
    await slack.acked(await people.say(slack, DM, "the answer?"))
    await answered(slack, DM, "forty-two")
    [ts] = [m.ts for m in slack.messages[DM] if m.user == MAIN_APP.bot_user]
    await wait_for(lambda: bool(slack.message(DM, ts).blocks), 10.0)  # the final edit carries the block
    conv, node = node_of(slack, DM, ts)
    chat = "slack:D0ANN"
    stored = await app.store.conversations.message(chat, conv, node)
    assert stored is not None and stored.role == "assistant" and stored.content == "forty-two"
    updates = len(slack.calls_of("chat.update"))

    await slack.acked(await people.rate(slack, DM, ts, good=True))
    await tallied(app, chat, conv, {node: Tally(1, 0)})
    await slack.acked(await people.rate(slack, DM, ts, good=False))  # Ann changes her mind
    await tallied(app, chat, conv, {node: Tally(0, 1)})
    await slack.acked(await people.rate(slack, DM, ts, good=True, user=BEN))  # Ben counts apart
    await tallied(app, chat, conv, {node: Tally(1, 1)})
    assert slack.shown(DM) == ["forty-two"] and len(slack.calls_of("chat.update")) == updates  # no message of its own
    assert len(fake.requests) == 1  # a press never asks the model

    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        base = f"http://127.0.0.1:{app.web_port}"
        await http.post(base + "/login", data={"password": PASSWORD})
        page = await (await http.get(base + "/tree", params={"chat": chat, "conv": conv})).text()
    assert f'data-node="{node}"' in page
    row = page.split(f'data-node="{node}"', 1)[1].split("</a>", 1)[0]
    assert "👍 1 · 👎 1" in row and 'title="rated helpful by 1, not helpful by 1"' in row


async def test_a_streamed_thread_answer_ends_with_feedback_and_a_press_on_a_vanished_one_is_answered_politely(
        app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    root = slack.user_message(CHANNEL, "a thread starts", BEN)
    fake.script(Text(" ".join(f"w{n}" for n in range(20)), delay=0.03))
    await slack.acked(await people.say(slack, CHANNEL, "stream here", mention=True, thread_ts=root))
    await answered(slack, CHANNEL, "w19", thread=root)
    await wait_for(lambda: slack.settled(CHANNEL), 10.0)
    stop = slack.calls_of("chat.stopStream")[-1].params
    assert stop["blocks"][0]["type"] == "context_actions"  # Slack draws it under the finished stream
    ts = stop["ts"]
    conv, node = node_of(slack, CHANNEL, ts)
    chat = f"slack:{CHANNEL}#{root}"  # the thread's own session
    assert await app.store.conversations.message(chat, conv, node) is not None
    await app.store.forget.forget_chat(chat)  # the answer is gone from the tree (forgotten)

    await slack.acked(await people.rate(slack, CHANNEL, ts, good=True, user=BEN))
    await answered(slack, CHANNEL, "no longer in the conversation tree", thread=root)
    assert slack.shown(CHANNEL, root)[0] == " ".join(f"w{n}" for n in range(20))  # the answer stays as it was
    assert await app.store.feedback.tallies(chat, conv) == {}


async def test_a_replayed_answer_ends_with_feedback_naming_the_replays_own_node(
        app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    fake.script(Text("the first answer"), Text("the replayed answer"))
    await slack.acked(await people.say(slack, DM, "a question to replay"))
    await answered(slack, DM, "the first answer")
    await slack.acked(await people.command(slack, DM, "replay"))
    await answered(slack, DM, "the replayed answer")
    ts = next(m.ts for m in slack.messages[DM] if "the replayed answer" in m.text)  # then the diff's report
    await wait_for(lambda: bool(slack.message(DM, ts).blocks), 10.0)
    conv, node = node_of(slack, DM, ts)
    chat = "slack:D0ANN"
    deadline = time.monotonic() + 10
    while (stored := await app.store.conversations.message(chat, conv, node)) is None:
        assert time.monotonic() < deadline, "the replay was not stored"
        await asyncio.sleep(0.02)
    assert stored.role == "assistant" and stored.content.endswith("the replayed answer")  # the replay's node
    await slack.acked(await people.rate(slack, DM, ts, good=True))
    await tallied(app, chat, conv, {node: Tally(1, 0)})
