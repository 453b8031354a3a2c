"""The adapter contract, held against every platform's fake: recorded payloads in, native replies out.

Each case reads tests/payloads/<platform>/<case>.json, whose `expect` says what the payload must parse
into (null: the adapter must not hand it over at all).
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.adapter import ChatUnavailable
from bot.hub.delivery import Delivery
from bot.messages import ButtonPress, ChatRef, InboundEvent, IncomingMessage, Overheard
from bot.replies import Button, Reply
from tests.adapters.contract.drivers import Driver, payload


def fields(message: InboundEvent, expect: dict[str, Any]) -> dict[str, Any]:
    return {key: getattr(message, key) for key in expect}


async def received(driver: Driver, case: str) -> IncomingMessage:
    recorded = payload(driver.name, case)
    await driver.inject(recorded["event"])
    message = await driver.inbox.next()
    assert isinstance(message, IncomingMessage)
    assert fields(message, recorded["expect"]) == recorded["expect"]
    return message


async def dm_chat(driver: Driver) -> ChatRef:
    return (await received(driver, "dm")).chat


async def test_a_direct_message_is_handed_over_as_addressed_to_the_bot(driver: Driver) -> None:
    message = await received(driver, "dm")
    assert message.platform == driver.name and message.message_id


async def test_a_group_mention_is_addressed_and_stripped_of_the_mention(driver: Driver) -> None:
    await received(driver, "group_mention")


async def test_group_talk_without_a_mention_is_overheard_never_addressed(driver: Driver) -> None:
    silence = payload(driver.name, "group_silence")
    await driver.inject(silence["event"])
    await driver.inject(payload(driver.name, "dm")["event"])  # a marker: everything before it has arrived
    before: list[InboundEvent] = []
    while not isinstance(message := await driver.inbox.next(), IncomingMessage) or message.is_group:
        before.append(message)
    assert [type(m) for m in before] == [Overheard]  # a kind of its own: the hub keeps it, never answers it
    assert [fields(m, silence["expect"]) for m in before] == [silence["expect"]]


async def test_a_command_arrives_as_its_command_text(driver: Driver) -> None:
    await received(driver, "command")


async def test_a_button_press_is_its_command_and_its_first_reply_replaces_the_pressed_message(
        driver: Driver) -> None:
    chat = await dm_chat(driver)
    delivery = Delivery(driver.adapter)
    keyboard = await delivery.send(chat, Reply("pick one", buttons=((Button("Go to 1", "/goto 1"),),)))
    assert keyboard is not None
    recorded = payload(driver.name, "button_press")
    await driver.press(recorded["event"], keyboard)
    press = await driver.inbox.next()
    assert fields(press, recorded["expect"]) == recorded["expect"]
    assert isinstance(press.origin, ButtonPress) and press.origin.message_id == keyboard.message_id
    await delivery.send(press.chat, Reply("moved to 1"))
    assert driver.shown(chat) == ["moved to 1"]  # replaced in place, nothing new
    await delivery.send(press.chat, Reply("a second reply"))
    assert driver.shown(chat) == ["moved to 1", "a second reply"]


async def test_a_long_reply_is_split_under_the_platform_limit_and_loses_nothing(driver: Driver) -> None:
    chat = await dm_chat(driver)
    lines = [f"line {n:04d} of a long answer that goes on and on" for n in range(400)]  # ~20 000 characters
    await Delivery(driver.adapter).send(chat, Reply("\n".join(lines)))
    shown = driver.shown(chat)
    assert len(shown) >= 2 and all(len(text) <= driver.limit for text in shown)
    assert [line for text in shown for line in text.split("\n") if line.strip()] == lines


async def test_a_stream_is_edited_in_place_and_ends_with_a_final_edit(driver: Driver) -> None:
    chat = await dm_chat(driver)
    ref = await driver.adapter.send(chat, Reply("Hel"), final=False)
    await driver.adapter.edit(ref, Reply("Hello"), final=False)
    await driver.adapter.edit(ref, Reply("Hello world"), final=True)
    assert driver.shown(chat) == ["Hello world"]
    assert not driver.stream_open(ref)


async def test_a_rate_limited_send_is_retried_and_delivered(driver: Driver) -> None:
    chat = await dm_chat(driver)
    driver.rate_limit_next_send()
    before = driver.send_attempts()
    assert await Delivery(driver.adapter).send(chat, Reply("after the wait")) is not None
    assert driver.shown(chat) == ["after the wait"]
    assert driver.send_attempts() - before == 2


async def test_a_chat_that_is_gone_is_a_typed_failure_and_delivery_stops_there(driver: Driver) -> None:
    chat = await dm_chat(driver)
    driver.chat_gone(chat)
    with pytest.raises(ChatUnavailable):
        await driver.adapter.send(chat, Reply("anyone there?"))
    delivery = Delivery(driver.adapter)
    driver.chat_gone(chat)
    assert await delivery.send(chat, Reply("still there?")) is None and delivery.is_gone(chat)


async def test_after_a_restart_messages_arrive_and_replies_go_out(driver: Driver) -> None:
    chat = await dm_chat(driver)
    await driver.adapter.stop()
    await driver.adapter.start(driver.inbox)
    assert driver.adapter.connected()
    again = await received(driver, "dm")
    await driver.adapter.send(again.chat, Reply("back again"))
    assert driver.shown(chat) == ["back again"]
