"""The adapter when Telegram or the hub let it down: the Bot API out of reach, a command menu refused, a tap
whose acknowledgement fails, and a hub that raises on a message."""

from __future__ import annotations

import logging
import socket

import pytest

from adapters.telegram import TelegramConfig, polling
from adapters.telegram.adapter import TelegramAdapter, create
from bot.adapter import NotKept
from bot.messages import IncomingMessage
from bot.replies import Button, Reply
from tests.adapters.telegram.conftest import Inbox, env, services
from tests.fakes.telegram_api import FakeTelegram

CHAT = 5001


async def test_the_bot_api_out_of_reach_is_a_connection_error_naming_where(fake: FakeTelegram) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{s.getsockname()[1]}"
    adapter = create(TelegramConfig(), env(fake, TELEGRAM_API_BASE=base), services())
    with pytest.raises(ConnectionError, match="cannot reach the Telegram Bot API at http://127"):
        await adapter.start(Inbox())
    assert not adapter.connected()


async def test_a_refused_command_menu_is_logged_and_the_bot_runs_on(
        fake: FakeTelegram, caplog: pytest.LogCaptureFixture) -> None:
    fake.fail("setMyCommands", 400, "Bad Request: BOT_COMMAND_INVALID")
    adapter, inbox = create(TelegramConfig(), env(fake), services()), Inbox()
    with caplog.at_level(logging.WARNING, "bothub.telegram"):
        await adapter.start(inbox)
    try:
        assert adapter.connected() and "could not publish the command menu: bot_command_invalid" in caplog.text.lower()
        fake.inject_message(CHAT, "hello")
        assert (await inbox.next()).text == "hello"
    finally:
        await adapter.stop()


async def test_a_tap_whose_acknowledgement_fails_still_reaches_the_hub(
        fake: FakeTelegram, polling: tuple[TelegramAdapter, Inbox], caplog: pytest.LogCaptureFixture) -> None:
    adapter, inbox = polling
    fake.inject_message(CHAT, "hi")
    asked = await inbox.next()
    sent = await adapter.send(asked.chat, Reply("pick", buttons=((Button("Tree", "/tree"),),)))
    fake.fail("answerCallbackQuery", 400, "Bad Request: query is too old and response timeout expired")
    with caplog.at_level(logging.INFO, "bothub.telegram"):
        fake.inject_callback(CHAT, int(sent.message_id), "/tree")
        pressed = await inbox.next()
        await fake.wait_until(lambda: "not acknowledged" in caplog.text)
    assert pressed.text == "/tree" and "query is too old" in caplog.text.lower()


async def test_an_update_not_kept_is_taken_again_before_the_chat_s_next_one(
        fake: FakeTelegram, caplog: pytest.LogCaptureFixture) -> None:
    """The hub could not store the first update (NotKept): its offset stays unconfirmed, Telegram hands it over again,
    and the chat's next update waits for it, so the chat keeps its order; another chat's goes on meanwhile."""
    handed: list[IncomingMessage] = []

    async def flaky(message: IncomingMessage) -> None:
        handed.append(message)
        if len(handed) == 1:
            raise NotKept("inbox write failed")

    adapter = create(TelegramConfig(), env(fake), services())
    await adapter.start(flaky)
    try:
        with caplog.at_level(logging.WARNING, "bothub.telegram"):
            fake.inject_message(CHAT, "first")
            fake.inject_message(CHAT, "second")
            fake.inject_message(CHAT + 1, "elsewhere")
            await fake.wait_until(lambda: len(handed) == 4 and fake.updates.unconfirmed == 0)
    finally:
        await adapter.stop()
    assert [m.text for m in handed if m.chat_id == str(CHAT)] == ["first", "first", "second"]
    assert [m.text for m in handed if m.chat_id != str(CHAT)] == ["elsewhere"]
    assert "not kept; Telegram delivers it again" in caplog.text


async def test_polling_rides_out_a_failed_unhook_and_a_conflict(
        fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(polling, "RETRY_AFTER", (0.01,))
    fake.fail("deleteWebhook", 400, "Bad Request: webhook is being changed")
    fake.fail("getUpdates", 409, "Conflict: terminated by other getUpdates request")
    adapter, inbox = create(TelegramConfig(), env(fake), services()), Inbox()
    with caplog.at_level(logging.WARNING, "bothub.telegram"):
        await adapter.start(inbox)
        try:
            fake.inject_message(CHAT, "through")
            assert (await inbox.next()).text == "through"
        finally:
            await adapter.stop()
    assert "deleting the webhook failed" in caplog.text and "terminated by other getUpdates" in caplog.text
    assert len(fake.calls_of("deleteWebhook")) == 2  # asked again after the conflict: a webhook may be set
