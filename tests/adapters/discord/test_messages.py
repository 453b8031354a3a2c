"""Plain messages over the gateway: which reach the hub, and what they are parsed into."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from adapters.discord import DiscordConfig
from adapters.discord.adapter import DiscordAdapter, create
from bot.config import Config, ConfigError
from bot.messages import Overheard
from tests.adapters.discord.conftest import SERVICES, Inbox
from tests.fakes.discord_api import (
    APP_ID,
    BOT_ROLE_ID,
    BOT_USER,
    CHANNEL_ID,
    DM_CHANNEL_ID,
    HUMAN,
    OTHER_BOT,
    THREAD2_ID,
    THREAD_ID,
    TOKEN,
    FakeDiscord,
)
from tests.fakes.proxy import FakeProxy

NOTICE = "<@700000000000000001> please notice"  # a mention of someone else, in a marker message


async def _deliver_then_mark(fake: FakeDiscord, inbox: Inbox, *payloads: dict) -> list:
    """Inject payloads, then a mentioned marker message; gateway order guarantees that anything the
    adapter let through before the marker is in the inbox when the marker arrives."""
    for payload in payloads:
        await fake.dispatch("MESSAGE_CREATE", payload)
    await fake.dispatch("MESSAGE_CREATE", fake.user_message(f"<@{APP_ID}> marker", mentions=(BOT_USER,)))
    messages = await inbox.wait()
    while messages[-1].text != "marker":
        messages = await inbox.wait(len(messages) + 1)
    return messages[:-1]


async def test_guild_message_with_mention_is_delivered_stripped(adapter: DiscordAdapter, fake: FakeDiscord,
                                                                inbox: Inbox) -> None:
    payload = fake.user_message(f"<@{APP_ID}> what is  a monad?", mentions=(BOT_USER,))
    await fake.dispatch("MESSAGE_CREATE", payload)
    [message] = await inbox.wait()
    assert (message.platform, message.chat_id, message.thread_id) == ("discord", CHANNEL_ID, None)
    assert message.text == "what is a monad?"
    assert message.message_id == payload["id"]
    assert (message.is_group, message.mentioned, message.is_button) == (True, True, False)
    assert (message.user_id, message.user_name) == (HUMAN["id"], "Ann")


async def test_nickname_mention_form_is_stripped_too(adapter: DiscordAdapter, fake: FakeDiscord,
                                                     inbox: Inbox) -> None:
    await fake.dispatch("MESSAGE_CREATE", fake.user_message(f"hey <@!{APP_ID}>, hi", mentions=(BOT_USER,)))
    [message] = await inbox.wait()
    assert message.text == "hey , hi"


async def test_guild_messages_not_for_the_bot_are_dropped_without_the_content_intent(
        adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox) -> None:
    passed = await _deliver_then_mark(
        fake, inbox,
        fake.user_message("just chatting"),
        fake.user_message("@everyone lunch?", mention_everyone=True),
        fake.user_message("@here anyone?", mention_everyone=True),
    )
    assert passed == []


async def test_with_the_content_intent_guild_talk_is_overheard_never_addressed(
        make_adapter: Callable[..., DiscordAdapter], fake: FakeDiscord, inbox: Inbox) -> None:
    running = make_adapter(message_content_intent=True)
    await running.start(inbox)
    image = {"id": "1", "filename": "cat.png", "size": 10, "url": "https://cdn.invalid/cat.png",
             "proxy_url": "https://cdn.invalid/cat.png", "content_type": "image/png"}
    try:
        talk = fake.user_message("just chatting")
        passed = await _deliver_then_mark(
            fake, inbox, talk, fake.user_message("in the thread", channel_id=THREAD_ID),
            fake.user_message("", attachments=[image]), fake.user_message("hello", author=OTHER_BOT))
    finally:
        await running.stop()
    assert [type(m) for m in passed] == [Overheard] * 3  # a kind of its own; other bots are still ignored
    first, threaded, picture = passed
    assert (first.chat_id, first.thread_id, first.message_id, first.user_name, first.text) == (
        CHANNEL_ID, None, talk["id"], "Ann", "just chatting")
    assert (threaded.chat_id, threaded.thread_id) == (CHANNEL_ID, THREAD_ID)
    assert (picture.text, [a.kind for a in picture.attachments]) == ("", ["image"])


async def test_bot_authors_are_ignored_including_itself(adapter: DiscordAdapter, fake: FakeDiscord,
                                                        inbox: Inbox) -> None:
    passed = await _deliver_then_mark(
        fake, inbox,
        fake.user_message(f"<@{APP_ID}> ping", author=OTHER_BOT, mentions=(BOT_USER,)),
        fake.user_message("hello", author=BOT_USER, dm=True),
    )
    assert passed == []


async def test_reply_to_the_bot_counts_as_a_mention(make_adapter: Callable[..., DiscordAdapter],
                                                    fake: FakeDiscord, inbox: Inbox) -> None:
    running = make_adapter(message_content_intent=True)  # a reply without a ping shows its text only then
    await running.start(inbox)
    answer = fake.user_message("an earlier answer", author=BOT_USER)
    await fake.dispatch("MESSAGE_CREATE", fake.user_message("and then?", referenced=answer))
    [message] = await inbox.wait()
    await running.stop()
    assert (message.text, message.mentioned, message.reply_to) == ("and then?", True, answer["id"])


async def test_reply_to_someone_else_is_not_for_the_bot(adapter: DiscordAdapter, fake: FakeDiscord,
                                                        inbox: Inbox) -> None:
    other = fake.user_message("human talk")
    assert await _deliver_then_mark(fake, inbox, fake.user_message("agreed", referenced=other)) == []


async def test_direct_message_needs_no_mention(adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox) -> None:
    await fake.dispatch("MESSAGE_CREATE", fake.user_message("hello there", dm=True))
    [message] = await inbox.wait()
    assert (message.chat_id, message.thread_id, message.is_group) == (DM_CHANNEL_ID, None, False)
    assert (message.text, message.mentioned) == ("hello there", True)


async def test_each_thread_is_its_own_session(adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox) -> None:
    for thread in (THREAD_ID, THREAD2_ID):
        await fake.dispatch("MESSAGE_CREATE", fake.user_message(f"<@{APP_ID}> hi", channel_id=thread,
                                                                mentions=(BOT_USER,)))
    first, second = await inbox.wait(2)
    assert (first.chat_id, first.thread_id) == (CHANNEL_ID, THREAD_ID)
    assert (second.chat_id, second.thread_id) == (CHANNEL_ID, THREAD2_ID)


async def test_other_user_mentions_become_names(adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox) -> None:
    await fake.dispatch("MESSAGE_CREATE", fake.user_message(f"<@{APP_ID}> {NOTICE}", mentions=(BOT_USER, HUMAN)))
    [message] = await inbox.wait()
    assert message.text == "@Ann please notice"


async def test_attachment_without_text_is_passed_as_attachment(adapter: DiscordAdapter, fake: FakeDiscord,
                                                               inbox: Inbox) -> None:
    image = {"id": "1", "filename": "cat.png", "size": 10, "url": "https://cdn.invalid/cat.png",
             "proxy_url": "https://cdn.invalid/cat.png", "content_type": "image/png"}
    await fake.dispatch("MESSAGE_CREATE", fake.user_message("", dm=True, attachments=[image]))
    [message] = await inbox.wait()
    assert message.text == ""
    assert [(a.kind, a.name, a.mime, a.size, a.handle) for a in message.attachments] == [
        ("image", "cat.png", "image/png", 10, "https://cdn.invalid/cat.png")]


async def test_identify_asks_for_message_content_only_when_configured(
        make_adapter: Callable[..., DiscordAdapter], fake: FakeDiscord, inbox: Inbox) -> None:
    for enabled in (False, True):
        running = make_adapter(message_content_intent=enabled)
        await running.start(inbox)
        assert running.connected()
        assert fake.identify is not None
        assert bool(fake.identify["intents"] & (1 << 15)) is enabled
        await running.stop()
        assert not running.connected()


def test_missing_token_is_a_clear_config_error() -> None:
    with pytest.raises(ConfigError, match="DISCORD_BOT_TOKEN"):
        create(Config(), {}, SERVICES)



async def test_the_adapter_restarts_as_the_watchdog_does_it(adapter: DiscordAdapter, fake: FakeDiscord,
                                                            inbox: Inbox) -> None:
    await adapter.stop()
    assert not adapter.connected()
    await adapter.start(inbox)  # a closed discord.Client cannot log in again: start builds a new one
    assert adapter.connected()
    await fake.dispatch("MESSAGE_CREATE", fake.user_message(f"<@{APP_ID}> back again", mentions=(BOT_USER,)))
    [message] = await inbox.wait()
    assert message.text == "back again"


async def test_a_mention_of_the_bots_managed_role_counts_as_a_mention(adapter: DiscordAdapter, fake: FakeDiscord,
                                                                      inbox: Inbox) -> None:
    payload = fake.user_message(f"<@&{BOT_ROLE_ID}> summarize this", mention_roles=[BOT_ROLE_ID])
    await fake.dispatch("MESSAGE_CREATE", payload)
    [message] = await inbox.wait()
    assert message.text == "summarize this"


async def test_rest_and_the_gateway_go_through_the_proxy_the_environment_names(fake: FakeDiscord,
                                                                             inbox: Inbox) -> None:
    """Friction 3, Discord: discord.py's `proxy=` gets HTTP_PROXY, for its REST calls and the gateway websocket."""
    proxy = FakeProxy()
    await proxy.start()
    config = DiscordConfig(api_base=fake.api_base, gateway_url=fake.gateway_url)
    adapter = create(config, {"DISCORD_BOT_TOKEN": TOKEN, "HTTP_PROXY": proxy.url}, SERVICES)
    try:
        await adapter.start(inbox)
        await fake.dispatch("MESSAGE_CREATE", fake.user_message(f"<@{APP_ID}> via the proxy", mentions=(BOT_USER,)))
        [message] = await inbox.wait()
    finally:
        await adapter.stop()
        await proxy.stop()
    assert message.text == "via the proxy"
    assert {target.split("?")[0] for target in proxy.targets()} >= {f"{fake.api_base}/users/@me", fake.gateway_url}
