"""Sending when streams or channels get in the way: a channel thread whose asker is unknown, a stream Slack
refuses, a draft with nothing new, replies through a command's response_url until it is used up, an
unreadable Retry-After, and the memory of senders kept bounded."""

from __future__ import annotations

import pytest

from adapters.slack import outbound
from adapters.slack.responses import PREFIX, USES
from bot.adapter import RateLimited, SendFailed
from bot.messages import ChatRef, IncomingMessage
from bot.replies import Reply
from tests.adapters.slack.test_outbound import CHANNEL, Socket, in_thread
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_rules import ApiError


async def test_a_channel_thread_whose_asker_is_unknown_is_posted_not_streamed(
        socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    chat = in_thread(slack, CHANNEL)  # Slack needs a channel stream's recipient, and nobody asked here
    ref = await adapter.send(chat, Reply("draft"), final=False)
    assert slack.calls_of("chat.startStream") == [] and not adapter.streaming(ref)
    await adapter.edit(ref, Reply("draft, then the end"), final=True)
    assert slack.shown(CHANNEL, chat.thread_id) == ["draft, then the end"]


async def test_a_stream_slack_refuses_for_another_reason_is_a_send_failure(
        socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    chat = in_thread(slack)
    slack.fail("chat.startStream", "invalid_arguments")
    with pytest.raises(SendFailed, match="invalid_arguments"):
        await adapter.send(chat, Reply("draft"), final=False)
    await adapter.send(chat, Reply("draft"), final=False)  # the workspace streams: tried again, not given up
    assert len(slack.calls_of("chat.startStream")) == 2


async def test_a_draft_with_nothing_new_appends_nothing(socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    chat = in_thread(slack)
    ref = await adapter.send(chat, Reply("same so far"), final=False)
    await adapter.edit(ref, Reply("same so far"), final=False)
    assert slack.calls_of("chat.appendStream") == [] and adapter.streaming(ref)


async def test_replies_outside_the_apps_channels_go_through_the_response_url_until_it_is_used_up(
        socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, inbox = socket_adapter
    form = {"command": "/bothub", "text": "tree", "channel_id": "C0OUTSIDE", "user_id": "U0ANN",
            "user_name": "ann", "trigger_id": "t-out", "team_id": "T0FAKE",
            "response_url": slack.response_url("C0OUTSIDE")}
    await slack.acked(await slack.push("slash_commands", form))
    (asked,) = inbox.handed
    assert isinstance(asked, IncomingMessage)
    ref = await adapter.send(asked.chat, Reply("the tree"))  # the app is not in that channel
    assert ref.message_id.startswith(PREFIX)
    for n in range(USES - 1):
        await adapter.edit(ref, Reply(f"the tree, take {n}"), final=True)
    assert [m.text for m in slack.messages["C0OUTSIDE"]] == [f"the tree, take {USES - 2}"]  # replaced each time
    with pytest.raises(SendFailed, match="used up or expired"):
        await adapter.edit(ref, Reply("one more"), final=True)


async def test_a_rate_limit_with_an_unreadable_retry_after_waits_a_second(
        socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    slack.open_channel(CHANNEL, "channel")
    slack._failures.append(("chat.postMessage", lambda: ApiError("ratelimited", 429, {"Retry-After": "soon"})))
    with pytest.raises(RateLimited) as limited:
        await adapter.send(ChatRef("slack", CHANNEL), Reply("hi"))
    assert limited.value.retry_after == 1.0


async def test_slack_unreachable_mid_send_is_a_send_failure(socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    await slack.stop()
    with pytest.raises(SendFailed, match="cannot reach Slack"):
        await adapter.send(ChatRef("slack", CHANNEL), Reply("hi"))


def test_senders_and_what_messages_show_are_remembered_within_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outbound, "REMEMBERED", 2)
    out = outbound.SlackOutbound(None, lambda: "T0FAKE", True, None)  # type: ignore[arg-type]
    for n in range(3):
        out.remember(IncomingMessage("slack", CHANNEL, None, f"{n}.0", f"U{n}", "u", True, True, "hi"))
        out._showing(f"{n}.0", "text", None)
    assert list(out._senders) == [(CHANNEL, "1.0"), (CHANNEL, "2.0")]
    assert list(out._shown) == ["1.0", "2.0"]
