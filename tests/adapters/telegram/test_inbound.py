"""Updates from the fake Bot API, through real PTB polling, into IncomingMessage values."""

from __future__ import annotations

import asyncio

import pytest

from adapters.telegram import TelegramConfig
from adapters.telegram.adapter import create
from bot.messages import Attachment, IncomingMessage, Overheard
from bot.replies import Button, Reply
from tests.adapters.telegram.conftest import Inbox, env, services
from tests.fakes.telegram_api import BOT_USER, FakeTelegram

GROUP = -100500
BOB = {"id": 77, "is_bot": False, "first_name": "Bob", "username": "bobby"}
NO_FIRST_NAME_SHOWN = {"id": 78, "is_bot": False, "first_name": "", "username": "carol"}


async def test_private_message_reaches_the_agent(fake: FakeTelegram, polling) -> None:
    _, inbox = polling
    update = fake.inject_message(42, "hello there")
    msg = await inbox.next()
    assert msg == IncomingMessage(
        platform="telegram", chat_id="42", thread_id=None,
        message_id=str(update["message"]["message_id"]), user_id="42", user_name="Ann Lee",
        is_group=False, mentioned=True, text="hello there", order=update["update_id"],
    )  # fmt: skip


async def test_group_message_needs_a_mention(fake: FakeTelegram, polling) -> None:
    _, inbox = polling
    update = fake.inject_message(GROUP, "just chatting", from_user=BOB)
    plain = await inbox.next()
    fake.inject_message(GROUP, "hey @hub_test_bot how are you?", from_user=BOB)
    addressed = await inbox.next()
    assert plain == Overheard("telegram", str(GROUP), None, str(update["message"]["message_id"]), "77", "Bob",
                              "just chatting")  # privacy mode off: handed over as group context, not addressed
    assert (addressed.mentioned, addressed.text, addressed.user_name) == (True, "hey how are you?", "Bob")


async def test_mention_of_another_user_is_not_a_mention(fake: FakeTelegram, polling) -> None:
    _, inbox = polling
    fake.inject_message(GROUP, "@someone_else look", from_user=BOB)
    assert isinstance(await inbox.next(), Overheard)


async def test_commands_addressed_to_us_lose_the_bot_name(fake: FakeTelegram, polling) -> None:
    _, inbox = polling
    fake.inject_message(GROUP, "/new@hub_test_bot my topic")
    fake.inject_message(GROUP, "/tree")
    first, second = await inbox.next(), await inbox.next()
    assert (first.text, first.mentioned) == ("/new my topic", True)
    assert (second.text, second.mentioned) == ("/tree", True)


async def test_command_for_another_bot_is_not_ours(fake: FakeTelegram, polling) -> None:
    _, inbox = polling
    fake.inject_message(GROUP, "/new@otherbot")
    fake.inject_message(42, "/help@otherbot")
    fake.inject_message(GROUP, "/help@HUB_TEST_BOT")
    msg = await inbox.next()
    assert (msg.mentioned, msg.text, msg.chat_id) == (True, "/help", str(GROUP))
    assert inbox.received == []


async def test_reply_to_the_bot_counts_as_a_mention(fake: FakeTelegram, polling) -> None:
    adapter, inbox = polling
    fake.inject_message(GROUP, "@hub_test_bot start")
    asked = await inbox.next()
    ref = await adapter.send(asked.chat, Reply("answer"))
    fake.inject_message(GROUP, "and then?", from_user=BOB, reply_to=int(ref.message_id))
    followup = await inbox.next()
    assert (followup.mentioned, followup.reply_to, followup.text) == (True, ref.message_id, "and then?")
    user_message = int(asked.message_id)
    fake.inject_message(GROUP, "me too", from_user=BOB, reply_to=user_message)
    assert isinstance(await inbox.next(), Overheard)  # a reply to a person is not for the bot


async def test_forum_topic_is_its_own_thread(fake: FakeTelegram, polling) -> None:
    _, inbox = polling
    fake.inject_message(GROUP, "@hub_test_bot in a topic", thread_id=7)
    fake.inject_message(GROUP, "chatter in the topic", thread_id=7)
    addressed, chatter = await inbox.next(), await inbox.next()
    assert (addressed.thread_id, addressed.mentioned, addressed.reply_to) == ("7", True, None)
    assert isinstance(chatter, Overheard)  # the topic root is not "reply to bot"
    assert chatter.thread_id == "7"


async def test_sender_without_full_name_is_shown_by_username(fake: FakeTelegram, polling) -> None:
    _, inbox = polling
    fake.inject_message(GROUP, "@hub_test_bot hi", from_user=NO_FIRST_NAME_SHOWN)
    assert (await inbox.next()).user_name == "@carol"


async def test_photo_caption_is_the_text_and_files_carry_their_handles(fake: FakeTelegram, polling) -> None:
    _, inbox = polling
    fake.inject_message(42, "what is this?", media="photo")
    fake.inject_message(42, media="photo")
    fake.inject_message(42, media="sticker")
    fake.inject_message(42, media="document")
    fake.inject_message(42, media="voice")
    captioned, bare, sticker, document, voice = [await inbox.next() for _ in range(5)]
    photo = Attachment("image", "photo.jpg", "image/jpeg", None, "ph-1")
    assert (captioned.text, captioned.attachments) == ("what is this?", (photo,))
    assert (bare.text, bare.attachments) == ("", (photo,))
    assert sticker.attachments == (Attachment("sticker", "sticker.webp", "image/webp", None, "st-1"),)
    assert document.attachments == (Attachment("file", "report.pdf", "", None, "do-1"),)
    assert voice.attachments == (Attachment("audio", "voice.ogg", "audio/ogg", None, "vo-1"),)


async def test_caption_mention_in_group_is_stripped(fake: FakeTelegram, polling) -> None:
    _, inbox = polling
    fake.inject_message(GROUP, "@hub_test_bot describe", media="photo")
    msg = await inbox.next()
    assert (msg.mentioned, msg.text) == (True, "describe")


async def test_other_update_shapes_are_skipped_without_harm(fake: FakeTelegram, polling) -> None:
    _, inbox = polling
    await fake.wait_until(lambda: bool(fake.calls_of("getUpdates")))  # allowed_updates is in force
    chat = fake.open_chat(GROUP)
    fake.inject_message(42, "edited text", kind="edited_message")
    fake.inject_message(GROUP, "a post", kind="channel_post")
    fake.inject_update({"my_chat_member": {"chat": chat, "from": BOB, "date": 0,
                                           "old_chat_member": {"status": "left", "user": BOT_USER},
                                           "new_chat_member": {"status": "member", "user": BOT_USER}}})
    fake.inject_update({"message": {"message_id": 900, "date": 0, "chat": chat, "from": BOB,
                                    "new_chat_members": [BOT_USER]}})  # service message: no text
    fake.inject_update({"message": {"message_id": 901, "date": 0, "chat": chat, "from": BOT_USER | {"id": 5},
                                    "text": "@hub_test_bot from another bot"}})
    fake.inject_update({"something_new": {"shape": ["nobody", "knows"]}})
    fake.inject_message(42, "still alive")
    msg = await inbox.next()
    assert msg.text == "still alive"
    await fake.quiet()
    assert inbox.received == []
    # Telegram never creates the kinds the adapter did not ask for; the message-shaped ones reach the parser
    assert [next(k for k in u if k != "update_id") for u in fake.updates.dropped] == [
        "edited_message", "channel_post", "my_chat_member", "something_new"]


async def test_button_press_becomes_a_command_and_is_answered(fake: FakeTelegram, polling) -> None:
    adapter, inbox = polling
    fake.inject_message(42, "/tree")
    asked = await inbox.next()
    ref = await adapter.send(asked.chat, Reply("tree", buttons=((Button("7", "/goto 7"),),), monospace=True))
    query_id = fake.inject_callback(42, int(ref.message_id), "/goto 7")
    press = await inbox.next()
    assert (press.text, press.is_button, press.mentioned) == ("/goto 7", True, True)
    assert press.message_id == f"cb:{query_id}"
    await fake.wait_until(lambda: fake.answered == [query_id])  # acknowledged right after the hub has it


async def test_allowed_updates_without_callback_query_would_lose_every_button(
        fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation: the adapter forgets `callback_query`. Telegram then never creates the update; so does the fake."""
    monkeypatch.setattr("adapters.telegram.adapter.ALLOWED_UPDATES", ["message"])
    adapter = create(TelegramConfig(), env(fake), services())
    inbox = Inbox()
    await adapter.start(inbox)
    try:
        fake.inject_message(42, "/tree")
        asked = await inbox.next()
        ref = await adapter.send(asked.chat, Reply("tree", buttons=((Button("7", "/goto 7"),),)))
        fake.inject_callback(42, int(ref.message_id), "/goto 7")
        await fake.quiet()
    finally:
        await adapter.stop()
    assert inbox.received == [] and fake.answered == []
    assert [u["callback_query"]["data"] for u in fake.updates.dropped] == ["/goto 7"]


async def test_the_adapter_asks_for_messages_and_button_presses(fake: FakeTelegram, polling) -> None:
    await fake.wait_until(lambda: bool(fake.calls_of("getUpdates")))
    assert fake.calls_of("getUpdates")[0]["allowed_updates"] == ["message", "callback_query"]


async def test_updates_from_different_chats_are_handled_concurrently(fake: FakeTelegram, polling) -> None:
    adapter, _ = polling
    release = asyncio.Event()
    seen: list[str] = []

    async def slow_in_chat_1(msg: IncomingMessage) -> None:
        seen.append(msg.chat_id)
        if msg.chat_id == "1":
            await release.wait()  # a long LLM run in chat 1 …

    adapter._on_message = slow_in_chat_1
    fake.inject_message(1, "long question")
    await fake.wait_until(lambda: seen == ["1"])
    fake.inject_message(2, "quick question")
    await fake.wait_until(lambda: "2" in seen)  # … must not hold up chat 2
    release.set()


async def test_unparsable_handler_errors_do_not_stop_polling(fake: FakeTelegram, polling) -> None:
    adapter, inbox = polling
    calls = 0

    async def flaky(msg: IncomingMessage) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("hub bug")
        await inbox(msg)

    adapter._on_message = flaky
    fake.inject_message(42, "first")
    fake.inject_message(42, "second")
    assert (await inbox.next()).text == "first"  # not kept the first time: taken again, and still first
    assert (await inbox.next()).text == "second"

