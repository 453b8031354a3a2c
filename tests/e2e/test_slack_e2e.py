"""The whole app (store, agent, hub) with the real slack_sdk adapter in Socket Mode against the fake Slack and
the fake LLM: DMs, mentions, threads, the assistant pane, slash commands, buttons, a socket cut mid-answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import App
from tests.adapters.slack.conftest import env as slack_env
from tests.adapters.slack.conftest import slack
from tests.fakes import slack_users as people
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_events import EventsPoster, event_callback
from tests.harness import running_app, wait_for

DM, CHANNEL = "D0ANN", "C0GENERAL"


__all__ = ["slack"]  # the fake Slack fixture, the adapter tests' own


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, slack: FakeSlack) -> AsyncIterator[App]:
    async with running_app(tmp_path, fake.base_url, ("slack",), env=slack_env(slack)) as running:
        yield running


async def answered(slack: FakeSlack, channel: str, needle: str, thread: str | None = None,
                   within: float = 10.0) -> None:
    await wait_for(lambda: any(needle in text for text in slack.shown(channel, thread)), within)


def last_prompt(llm: FakeOpenAI) -> str:
    return str(llm.requests[-1]["body"]["messages"][-1]["content"])


async def test_a_dm_is_acked_and_answered(app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    fake.script(Text("hello *Ann* & co"))
    envelope = await slack.acked(await people.say(slack, DM, "hi there"))
    assert envelope.ack_delay is not None and envelope.ack_delay < 3.0
    await answered(slack, DM, "hello")
    assert slack.shown(DM) == ["hello _Ann_ &amp; co"]  # Markdown emphasis as mrkdwn, & escaped
    assert last_prompt(fake).endswith("hi there")


async def test_a_mention_in_a_channel_is_answered_there_and_talk_is_only_overheard(
        app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    await slack.acked(await people.say(slack, CHANNEL, "the build is red again", user="U0BEN"))
    fake.script(Text("it is"))
    await slack.acked(await people.say(slack, CHANNEL, "is the build red?", mention=True))
    await answered(slack, CHANNEL, "it is")
    assert len(fake.requests) == 1  # only the mention ran a turn
    prompt = str(fake.requests[0]["body"]["messages"])
    assert "the build is red again" in prompt and "<@U0BOT>" not in last_prompt(fake)


async def test_a_thread_is_its_own_session_and_its_answer_streams_natively_in_it(
        app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    await slack.acked(await people.say(slack, CHANNEL, "top level", mention=True))
    await answered(slack, CHANNEL, "top level")
    root = slack.user_message(CHANNEL, "a thread starts", "U0BEN")
    words = " ".join(f"w{n}" for n in range(40))
    fake.script(Text(words, delay=0.05))
    await slack.acked(await people.say(slack, CHANNEL, "stream here", mention=True, thread_ts=root))
    await answered(slack, CHANNEL, "w39", thread=root)
    assert slack.shown(CHANNEL, root) == [words]
    assert slack.calls_of("chat.startStream") and slack.calls_of("chat.appendStream")
    assert slack.calls_of("chat.stopStream") and not slack.calls_of("chat.update")
    start = slack.calls_of("chat.startStream")[0].params
    assert start["thread_ts"] == root and start["recipient_user_id"] == people.ANN
    assert not slack.message(CHANNEL, slack.calls_of("chat.stopStream")[0].params["ts"]).streaming
    assert "top level" not in str(fake.requests[-1]["body"]["messages"])  # the thread has its own history


async def test_the_assistant_pane_greets_thinks_titles_and_answers_in_its_thread(
        app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    thread, opened = await people.open_assistant(slack, DM)
    await slack.acked(opened)
    await wait_for(lambda: (DM, thread) in slack.prompts, 5.0)
    assert len(slack.prompts[(DM, thread)]) == 3
    fake.script(Text("Paris is the capital of France", first_token_delay=0.5))
    await slack.acked(await people.say(slack, DM, "What is the capital of France?", thread_ts=thread))
    await answered(slack, DM, "Paris", thread=thread)
    assert (DM, thread, "is thinking…") in slack.statuses
    assert len([s for s in slack.statuses if s[1] == thread]) == 1  # once per answer, not per typing tick
    assert slack.titles[(DM, thread)] == "What is the capital of France?"


async def test_a_slash_command_runs_the_command(app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    await slack.acked(await people.command(slack, DM, "status"))
    await wait_for(lambda: bool(slack.shown(DM)), 10.0)
    await slack.acked(await people.command(slack, DM, "", name="/help"))
    await wait_for(lambda: any("/voice" in text for text in slack.shown(DM)), 10.0)  # the help's last command
    help_text = "\n".join(slack.shown(DM)[1:])  # long enough to be split at Slack's limit
    assert "/tree" in help_text and "/forget_me" in help_text and not fake.requests


async def test_a_button_press_runs_its_command_in_place_of_the_pressed_message(
        app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    fake.script(Text("first answer"))
    await slack.acked(await people.say(slack, DM, "remember this"))
    await answered(slack, DM, "first answer")
    await slack.acked(await people.command(slack, DM, "new"))
    await wait_for(lambda: len(slack.shown(DM)) == 2, 10.0)
    await slack.acked(await people.command(slack, DM, "list"))
    await wait_for(lambda: people.bot_buttons(slack, DM) != [], 10.0)
    pressed, action = next((ts, value) for ts, value in people.bot_buttons(slack, DM) if value.startswith("/switch"))
    before = len(slack.shown(DM))
    await slack.acked(await people.press(slack, DM, pressed, action))
    await wait_for(lambda: any(c.params["ts"] == pressed for c in slack.calls_of("chat.update")), 10.0)
    assert len(slack.shown(DM)) == before  # replaced in place, nothing new
    assert "first answer" not in slack.message(DM, pressed).text


async def test_commands_and_presses_in_a_channel_the_app_was_never_invited_to_answer_through_response_url(
        app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    outside = "C0OUTSIDE"
    await slack.acked(await people.command(slack, outside, "new", invited=False))
    await wait_for(lambda: len(slack.shown(outside)) == 1, 10.0)
    await slack.acked(await people.command(slack, outside, "list", invited=False))
    await wait_for(lambda: people.bot_buttons(slack, outside) != [], 10.0)
    assert len(slack.calls_of("chat.postMessage")) == 2  # each refused once (not_in_channel), never retried
    pressed, action = next((ts, v) for ts, v in people.bot_buttons(slack, outside) if v.startswith("/switch"))
    shown = slack.shown(outside)
    await slack.acked(await people.press(slack, outside, pressed, action))
    await wait_for(lambda: slack.shown(outside) != shown, 10.0)
    assert len(slack.shown(outside)) == len(shown)  # the pressed message replaced in place, nothing new
    bodies = [body for hook in slack.hooks.values() for body in hook.posted]
    assert [b["response_type"] for b in bodies] == ["in_channel"] * 3 and bodies[-1]["replace_original"]
    assert not fake.requests


async def test_a_socket_cut_mid_answer_loses_nothing(app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    thread, opened = await people.open_assistant(slack, DM)
    await slack.acked(opened)
    words = " ".join(f"w{n}" for n in range(60))
    fake.script(Text(words, delay=0.05), Text("second answer"))
    await slack.acked(await people.say(slack, DM, "long one", thread_ts=thread))
    await wait_for(lambda: bool(slack.calls_of("chat.appendStream")), 10.0)
    await slack.drop()  # mid-stream: the Web API keeps working, the socket comes back
    waiting = await people.say(slack, DM, "while it was down")  # delivered on the next socket
    await answered(slack, DM, "w59", thread=thread, within=15.0)
    await slack.acked(waiting, within=15.0)
    await answered(slack, DM, "second answer", within=15.0)
    assert slack.connections == 2 and slack.shown(DM, thread) == [words]


async def test_a_refresh_request_reconnects_and_a_redelivered_envelope_runs_once(
        app: App, slack: FakeSlack, fake: FakeOpenAI) -> None:
    await slack.refresh()
    await wait_for(lambda: slack.connections == 2 and slack.connected.is_set(), 15.0)
    envelope = await people.say(slack, DM, "once only")
    await slack.acked(envelope)
    await answered(slack, DM, "once only")
    again = await slack.push("events_api", envelope.payload)  # Slack retrying the same event
    await slack.acked(again)
    fake.script(Text("marker"))
    await slack.acked(await people.say(slack, DM, "marker please"))
    await answered(slack, DM, "marker")
    assert len(fake.requests) == 2


async def test_over_the_events_api_a_signed_dm_is_answered_and_a_forged_one_refused(
        tmp_path: Path, fake: FakeOpenAI, slack: FakeSlack) -> None:
    env = {**slack_env(slack), "SLACK_SIGNING_SECRET": "events-secret"}
    config = {"slack": {"mode": "events"}}
    async with running_app(tmp_path, fake.base_url, ("slack",), env=env, config=config) as running:
        poster = EventsPoster(f"http://127.0.0.1:{running.web_port}/slack/events", "events-secret")
        try:
            forged = EventsPoster(poster.url, "guessed-secret")
            assert (await forged.event(event_callback(people.message_event(slack, DM, "forged")))).status == 401
            await forged.close()
            fake.script(Text("over http"))
            assert (await poster.event(event_callback(people.message_event(slack, DM, "hello")))).status == 200
            await answered(slack, DM, "over http")
        finally:
            await poster.close()
    assert slack.connections == 0 and len(fake.requests) == 1  # no socket; the forged event never ran a turn
