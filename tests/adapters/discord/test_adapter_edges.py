"""The adapter when something around it fails: the hub raising on a message, the conversation list failing
behind autocomplete, a refused slash-command sync at start, and Discord out of reach."""

from __future__ import annotations

import dataclasses
import logging
import socket
from collections.abc import Callable

import pytest

from adapters.discord import DiscordConfig
from adapters.discord.adapter import DiscordAdapter, create
from bot.adapter import ConversationChoice, SendFailed
from bot.messages import ChatRef, IncomingMessage
from bot.replies import Reply
from tests.adapters.discord.conftest import SERVICES, Inbox
from tests.fakes.discord_api import APP_ID, BOT_USER, CHANNEL_ID, TOKEN, FakeDiscord
from tests.fakes.discord_rules import error_response


async def test_a_hub_that_fails_on_a_message_is_logged_and_the_next_one_still_arrives(
        make_adapter: Callable[..., DiscordAdapter], fake: FakeDiscord, caplog: pytest.LogCaptureFixture) -> None:
    handed: list[IncomingMessage] = []

    async def flaky(message: IncomingMessage) -> None:
        handed.append(message)
        if len(handed) == 1:
            raise RuntimeError("inbox write failed")

    running = make_adapter()
    await running.start(flaky)
    try:
        with caplog.at_level(logging.ERROR, "adapters.discord.adapter"):
            for text in ("first", "second"):
                await fake.dispatch("MESSAGE_CREATE", fake.user_message(f"<@{APP_ID}> {text}", mentions=(BOT_USER,)))
            await fake.wait_for(lambda: len(handed) == 2)
    finally:
        await running.stop()
    assert [m.text for m in handed] == ["first", "second"]
    assert f"the hub failed on message {handed[0].message_id}" in caplog.text


async def test_autocomplete_offers_nothing_when_the_conversation_list_fails(
        fake: FakeDiscord, inbox: Inbox, caplog: pytest.LogCaptureFixture) -> None:
    async def broken(chat: ChatRef, user_id: str) -> list[ConversationChoice]:
        raise RuntimeError("database unreachable")

    config = DiscordConfig(api_base=fake.api_base, gateway_url=fake.gateway_url)
    running = create(config, {"DISCORD_BOT_TOKEN": TOKEN}, dataclasses.replace(SERVICES, list_conversations=broken))
    await running.start(inbox)
    try:
        with caplog.at_level(logging.ERROR, "adapters.discord.adapter"):
            await fake.dispatch("INTERACTION_CREATE", fake.autocomplete("switch", "conversation", ""))
            callbacks = r"/interactions/\d+/itoken-\d+/callback"
            await fake.wait_for(lambda: bool(fake.calls_to("POST", callbacks)))
    finally:
        await running.stop()
    (answer,) = fake.calls_to("POST", callbacks)
    assert answer.body["type"] == 8 and answer.body["data"]["choices"] == []  # an empty list, not an error
    assert "listing conversations for autocomplete failed" in caplog.text


async def test_a_refused_command_sync_at_start_leaves_the_bot_running(
        make_adapter: Callable[..., DiscordAdapter], inbox: Inbox, fake: FakeDiscord,
        caplog: pytest.LogCaptureFixture) -> None:
    fake.fail("PUT", rf"/applications/{APP_ID}/commands", lambda: error_response(400, 50035, "Invalid Form Body"))
    running = make_adapter(sync_commands_on_start=True)
    with caplog.at_level(logging.WARNING, "adapters.discord.adapter"):
        await running.start(inbox)
    try:
        assert running.connected()
        assert "registering slash commands failed" in caplog.text and "Invalid Form Body" in caplog.text
        await fake.dispatch("MESSAGE_CREATE", fake.user_message(f"<@{APP_ID}> still here", mentions=(BOT_USER,)))
        assert [m.text for m in await inbox.wait()] == ["still here"]
    finally:
        await running.stop()


async def test_discord_out_of_reach_is_a_connection_error_naming_where(fake: FakeDiscord, inbox: Inbox) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{s.getsockname()[1]}/api"
    running = create(DiscordConfig(api_base=base, gateway_url=fake.gateway_url), {"DISCORD_BOT_TOKEN": TOKEN},
                     SERVICES)
    try:
        with pytest.raises(ConnectionError, match=r"cannot reach Discord at http://127\.0\.0\.1"):
            await running.start(inbox)
        assert not running.connected()
    finally:
        await running.stop()


async def test_typing_is_left_to_discords_thinking_for_a_deferred_command(
        adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.slash("new", {"role": "coder"}))
    [command] = await inbox.wait()
    await adapter.typing(command.chat)
    assert fake.calls_to("POST", r"/channels/\d+/typing") == []  # "is thinking…" shows already
    await adapter.typing(ChatRef("discord", command.chat.chat_id, None, True))  # a plain message's chat types
    assert len(fake.calls_to("POST", r"/channels/\d+/typing")) == 1


async def test_discord_gone_mid_send_is_a_send_failure(adapter: DiscordAdapter, fake: FakeDiscord) -> None:
    await fake.stop()
    with pytest.raises(SendFailed, match="discord unreachable"):
        await adapter.send(ChatRef("discord", CHANNEL_ID, None, True), Reply("hello?"))
