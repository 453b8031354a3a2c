"""Sending through the real slack_sdk to the fake Slack: typed failures, streams and their fallback, parts
under the limit; and the fake's own strictness (token types, Block Kit, streams, pacing)."""

from __future__ import annotations

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.adapter import SlackAdapter
from adapters.slack.files import SlackFiles
from adapters.slack.outbound import SlackOutbound
from adapters.slack.responses import Responses
from bot.adapter import ChatUnavailable, RateLimited, SendFailed
from bot.messages import Attachment, AttachmentKind, ChatRef
from bot.replies import Reply
from tests.adapters.slack.conftest import Inbox
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_rules import APP_TOKEN, BOT_TOKEN

DM, CHANNEL = "D0ANN", "C0GENERAL"
Socket = tuple[SlackAdapter, Inbox]


def in_thread(slack: FakeSlack, channel: str = DM) -> ChatRef:
    slack.open_channel(channel, "im" if channel.startswith("D") else "channel")
    root = slack.user_message(channel, "question", "U0ANN")
    return ChatRef("slack", channel, root, not channel.startswith("D"))


async def test_a_429_is_rate_limited_with_slacks_retry_after(socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    slack.open_channel(DM, "im")
    slack.rate_limit("chat.postMessage", seconds=7)
    with pytest.raises(RateLimited) as limited:
        await adapter.send(ChatRef("slack", DM), Reply("hi"))
    assert limited.value.retry_after == 7.0


async def test_a_removed_app_is_chat_unavailable_and_an_uninvited_one_or_a_bad_request_send_failed(
        socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    slack.open_channel("C0GONE", "channel")
    slack.gone("C0GONE")
    with pytest.raises(ChatUnavailable):
        await adapter.send(ChatRef("slack", "C0GONE"), Reply("hi"))
    with pytest.raises(SendFailed, match="not_in_channel"):  # not invited yet: fixable, so not written off
        await adapter.send(ChatRef("slack", "C0NOTINVITED"), Reply("hi"))
    slack.open_channel(DM, "im")
    slack.fail("chat.postMessage", "invalid_blocks")
    with pytest.raises(SendFailed, match="invalid_blocks"):
        await adapter.send(ChatRef("slack", DM), Reply("hi"))


async def test_a_stream_in_a_thread_appends_only_what_was_added(socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    chat = in_thread(slack)
    ref = await adapter.send(chat, Reply("Hel"), final=False)
    await adapter.edit(ref, Reply("Hello"), final=False)
    await adapter.edit(ref, Reply("Hello **world**"), final=True)
    assert [c.params.get("markdown_text") for c in slack.calls if "Stream" in c.method] == [
        "Hel", "lo", " **world**"]
    assert slack.shown(DM, chat.thread_id) == ["Hello **world**"] and not adapter.streaming(ref)


async def test_a_rewritten_stream_is_stopped_and_replaced(socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    chat = in_thread(slack, CHANNEL)
    adapter._outbound._senders[(CHANNEL, chat.thread_id or "")] = "U0ANN"  # as when the question came in
    ref = await adapter.send(chat, Reply("draft one"), final=False)
    await adapter.edit(ref, Reply("something else"), final=True)
    assert [c.method for c in slack.calls][-3:] == ["chat.startStream", "chat.stopStream", "chat.update"]
    assert slack.shown(CHANNEL, chat.thread_id) == ["something else"]


async def test_without_native_streams_the_answer_is_posted_and_updated(
        socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    slack.streams_supported = False
    chat = in_thread(slack)
    ref = await adapter.send(chat, Reply("Hel"), final=False)
    await adapter.edit(ref, Reply("Hello"), final=True)
    second = await adapter.send(chat, Reply("again"), final=False)
    assert slack.shown(DM, chat.thread_id) == ["Hello", "again"] and second.message_id
    assert len(slack.calls_of("chat.startStream")) == 1  # asked once, then remembered


async def test_a_file_download_without_the_token_is_the_sign_in_page_and_refused(
        socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    shared = slack.store_file("notes.txt", "text/plain", b"notes")
    async with aiohttp.ClientSession() as session:
        web = AsyncWebClient(token=BOT_TOKEN, base_url=slack.api_base)
        outbound = SlackOutbound(web, lambda: "T0FAKE", True, Responses(lambda: session, slack.api_base))
        careless = SlackFiles(outbound, "not-this-workspaces-token", 1000, lambda: session)
        with pytest.raises(SendFailed, match="sign-in page"):
            async for _ in careless.download(Attachment(AttachmentKind.FILE, handle=shared["id"])):
                pass
        capped = SlackFiles(outbound, BOT_TOKEN, 3, lambda: session)
        with pytest.raises(SendFailed, match="cap"):
            async for _ in capped.download(Attachment(AttachmentKind.FILE, handle=shared["id"])):
                pass
    assert adapter.files is not None
    got = b"".join([chunk async for chunk in adapter.files.download(Attachment(AttachmentKind.FILE,
                                                                                handle=shared["id"]))])
    assert got == b"notes"


async def test_the_fake_refuses_what_slack_refuses(slack: FakeSlack) -> None:
    bot = AsyncWebClient(token=BOT_TOKEN, base_url=slack.api_base)
    app = AsyncWebClient(token=APP_TOKEN, base_url=slack.api_base)
    slack.open_channel(DM, "im")
    too_long = [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}]
    for call, error in [
        (lambda: bot.apps_connections_open(app_token=BOT_TOKEN), "not_allowed_token_type"),
        (lambda: app.chat_postMessage(channel=DM, text="hi"), "not_allowed_token_type"),
        (lambda: AsyncWebClient(token="xoxb-wrong", base_url=slack.api_base).auth_test(), "invalid_auth"),
        (lambda: bot.api_call("chat.postMessage", json={"channel": DM, "text": ""}), "no_text"),
        (lambda: bot.chat_postMessage(channel=DM, text="x" * 40_001), "msg_too_long"),
        (lambda: bot.chat_postMessage(channel=DM, text="x", blocks=too_long), "invalid_blocks"),
        (lambda: bot.chat_startStream(channel=DM, thread_ts="1.1"), "message_not_found"),
        (lambda: bot.chat_appendStream(channel=DM, ts="1.1", markdown_text="x"), "message_not_found"),
        (lambda: bot.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts="1.1", status="x"), "not_in_channel"),
    ]:
        with pytest.raises(SlackApiError) as refused:
            await call()
        assert refused.value.response["error"] == error
    posted = await bot.chat_postMessage(channel=DM, text="done")
    with pytest.raises(SlackApiError, match="message_not_in_streaming_state"):
        await bot.chat_appendStream(channel=DM, ts=posted["ts"], markdown_text="more")


async def test_the_fake_judges_a_channel_flooded_past_one_message_a_second(slack: FakeSlack) -> None:
    bot = AsyncWebClient(token=BOT_TOKEN, base_url=slack.api_base)
    slack.open_channel(DM, "im")
    slack.limits = None  # nothing refused: the judge alone sees it
    slack.budget_allowance = "this test floods on purpose"
    for n in range(10):
        await bot.chat_postMessage(channel=DM, text=f"m{n}")
    assert [b.rule for b in slack.budget_breaches] == ["chat.postMessage per channel"] * 2


async def test_an_edit_to_what_the_message_already_shows_is_not_made_but_a_refused_one_is_retried(
        socket_adapter: Socket, slack: FakeSlack) -> None:
    adapter, _ = socket_adapter
    slack.open_channel(CHANNEL, "channel")
    chat = ChatRef("slack", CHANNEL, None, True)
    ref = await adapter.send(chat, Reply("partial"), final=False)
    await adapter.edit(ref, Reply("partial"), final=True)  # chat.update is Tier 3: nothing to change, no call
    assert slack.calls_of("chat.update") == []
    slack.rate_limit("chat.update")
    with pytest.raises(RateLimited):
        await adapter.edit(ref, Reply("whole"), final=True)
    await adapter.edit(ref, Reply("whole"), final=True)  # the hub's retry is made, though the text was tried
    assert len(slack.calls_of("chat.update")) == 2 and slack.shown(CHANNEL) == ["whole"]
