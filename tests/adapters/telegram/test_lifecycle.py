"""Start-up, shutdown, command menu, webhook mode and configuration errors."""

from __future__ import annotations

import aiohttp
import pytest

from adapters.telegram import TelegramConfig
from adapters.telegram.adapter import TelegramAdapter, create
from bot.commands import COMMANDS
from bot.config import ConfigError
from bot.messages import ChatRef
from bot.replies import Reply
from tests.adapters.telegram.conftest import Inbox, WebhookHub, env, services
from tests.fakes.proxy import FakeProxy
from tests.fakes.telegram_api import FakeTelegram


async def test_polling_start_publishes_commands_in_english_and_chinese(fake: FakeTelegram, polling) -> None:
    adapter, _ = polling
    assert adapter.connected()
    english, chinese = fake.commands[("default", "")], fake.commands[("default", "zh")]
    expected = [n for n, c in COMMANDS.items() if not c.hidden]  # the core registry's typed commands, no adapter change
    assert [c["command"] for c in english] == [c["command"] for c in chinese] == expected
    assert {"model", "lang", "memory", "forget", "roles", "approve", "deny", "pair"} <= set(expected)
    first = COMMANDS[expected[0]]
    assert (english[0]["description"], chinese[0]["description"]) == first.help
    await fake.wait_until(lambda: bool(fake.calls_of("getUpdates")))
    methods = [c.method for c in fake.calls]
    assert methods[:4] == ["getMe", "setMyCommands", "setMyCommands", "deleteWebhook"]


async def test_stop_disconnects_and_confirms_the_offset(fake: FakeTelegram) -> None:
    adapter = create(TelegramConfig(), env(fake), services())
    inbox = Inbox()
    await adapter.start(inbox)
    update = fake.inject_message(42, "hi")
    await inbox.next()
    await adapter.stop()
    assert not adapter.connected()
    assert fake.calls_of("getUpdates")[-1]["offset"] == update["update_id"] + 1


async def test_webhook_checks_the_secret(fake: FakeTelegram, webhook: WebhookHub) -> None:
    assert webhook.adapter.connected()
    assert fake.calls_of("setWebhook")[-1]["url"] == webhook.url
    body = {"update_id": 1, "message": {"message_id": 5, "date": 0, "text": "hello",
                                        "chat": {"id": 42, "type": "private", "first_name": "Ann"},
                                        "from": {"id": 42, "is_bot": False, "first_name": "Ann"}}}
    async with aiohttp.ClientSession() as client:
        for secret in (None, "", " ", "wrong", "right-secret_", "right-secret_1x", "RIGHT-SECRET_1"):  # absent…wrong
            headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret is not None else {}
            async with client.post(webhook.url, json=body, headers=headers) as response:
                assert response.status == 403
        async with client.post(webhook.url, json=body,
                               headers={"X-Telegram-Bot-Api-Secret-Token": "right-secret_1"}) as response:
            assert response.status == 200
    msg = await webhook.inbox.next()
    assert (msg.text, msg.message_id) == ("hello", "5")
    assert webhook.inbox.received == []


async def test_webhook_skips_a_malformed_body_and_answers_503_while_stopped(
        fake: FakeTelegram, webhook: WebhookHub, caplog: pytest.LogCaptureFixture) -> None:
    right = {"X-Telegram-Bot-Api-Secret-Token": "right-secret_1"}
    async with aiohttp.ClientSession() as client:
        for body in (b"{not json", b"[1, 2]"):  # a 500 would make Telegram redeliver it forever
            async with client.post(webhook.url, data=body, headers=right) as response:
                assert response.status == 200
        assert caplog.text.count("telegram webhook: unreadable update skipped") == 2
        fake.inject_message(42, "still fine")
        assert (await webhook.inbox.next()).text == "still fine"
        await webhook.adapter.stop()
        async with client.post(webhook.url, json={"update_id": 9}, headers=right) as response:
            assert response.status == 503  # Telegram keeps the update and retries later
    assert webhook.inbox.received == []


async def test_webhook_receives_updates_telegram_pushes(fake: FakeTelegram, webhook: WebhookHub) -> None:
    fake.inject_message(42, "pushed by telegram")
    assert (await webhook.inbox.next()).text == "pushed by telegram"
    await fake.wait_until(lambda: fake.webhook_statuses == [200])  # the 200 comes once the hub has the message
    assert "getUpdates" not in [c.method for c in fake.calls]


async def test_webhook_answers_503_for_an_update_not_kept_and_takes_telegram_s_retry(
        fake: FakeTelegram, webhook: WebhookHub) -> None:
    webhook.inbox.refuse = 1
    update = fake.inject_message(42, "kept the second time")
    await fake.wait_until(lambda: fake.webhook_statuses == [503])
    assert webhook.inbox.received == []
    secret = {"X-Telegram-Bot-Api-Secret-Token": "right-secret_1"}
    async with aiohttp.ClientSession() as client, client.post(webhook.url, json=update, headers=secret) as response:
        assert response.status == 200  # Telegram retried the same update
    assert (await webhook.inbox.next()).text == "kept the second time"


async def test_missing_token_is_a_clear_config_error() -> None:
    with pytest.raises(ConfigError, match="TELEGRAM_BOT_TOKEN"):
        create(TelegramConfig(), {}, services())


async def test_bad_webhook_secret_is_a_config_error(fake: FakeTelegram) -> None:
    config = TelegramConfig(webhook_url="https://example.com/telegram/webhook")
    with pytest.raises(ConfigError, match="TELEGRAM_WEBHOOK_SECRET"):
        create(config, env(fake, TELEGRAM_WEBHOOK_SECRET="has spaces!"), services({}))


async def test_rejected_token_is_a_clear_config_error(fake: FakeTelegram) -> None:
    adapter = create(TelegramConfig(), env(fake, TELEGRAM_BOT_TOKEN="999:WRONG-TOKEN"), services())
    with pytest.raises(ConfigError, match="rejected"):
        await adapter.start(Inbox())
    assert isinstance(adapter, TelegramAdapter) and not adapter.connected()


async def test_a_revoked_token_ends_polling_and_shows_as_disconnected(fake: FakeTelegram) -> None:
    adapter = create(TelegramConfig(), env(fake), services())
    await adapter.start(Inbox())
    fake.fail("getUpdates", 401, "Unauthorized", times=1000)  # the token was revoked while running
    await fake.wait_until(lambda: not adapter.connected())  # so the watchdog can restart it and report it
    await adapter.stop()


def test_the_pace_over_all_chats_is_telegrams_unless_the_bot_was_allowed_more(fake: FakeTelegram) -> None:
    assert create(TelegramConfig(), env(fake), services()).capabilities.global_window == (30, 1.0)
    raised = create(TelegramConfig(messages_per_second=300), env(fake), services())
    assert raised.capabilities.global_window == (300, 1.0)
    assert TelegramAdapter.capabilities.global_window == (30, 1.0)  # one adapter's setting is its own
    with pytest.raises(ValueError, match="less than or equal to 1000"):
        TelegramConfig(messages_per_second=5000)


async def test_every_bot_api_call_goes_through_the_proxy_the_environment_names(fake: FakeTelegram) -> None:
    """Friction 3, Telegram: HTTP_PROXY reaches python-telegram-bot's two HTTP clients (sends and getUpdates)."""
    proxy = FakeProxy()
    await proxy.start()
    adapter = create(TelegramConfig(), env(fake, HTTP_PROXY=proxy.url), services())
    fake.open_chat(42)
    try:
        await adapter.start(Inbox())
        await adapter.send(ChatRef("telegram", "42"), Reply("via the proxy"))
    finally:
        await adapter.stop()
        await proxy.stop()
    called = {target.rsplit("/", 1)[1] for target in proxy.targets()}
    assert {"getMe", "getUpdates", "sendMessage"} <= called
    assert all(target.startswith(fake.api_base) for target in proxy.targets())
