"""The adapter contract, held against every adapter over its real transport: recorded payloads in, native
replies out.

Each case reads tests/payloads/<platform>/<case>.json, whose `expect` says what the payload must parse
into (null: the adapter must not hand it over at all). What a platform cannot do (groups on the API, buttons
in a terminal) is no skip: the test asserts the adapter declares it so, agreeing with its driver, and checks
what happens instead where something does.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.adapter import ChatUnavailable
from bot.delivery import Delivery
from bot.messages import ButtonPress, ChatRef, InboundEvent, IncomingMessage, Overheard, ReplyTo
from bot.replies import Button, Column, Feedback, Reply
from tests.adapters.contract.driver import ABILITIES, Driver, payload


def declares(driver: Driver, ability: str) -> bool:
    """The adapter's declared capability, which must be what its driver knows of the platform."""
    assert ability in ABILITIES
    declared = getattr(driver.adapter.capabilities, ability)
    assert declared == (ability in driver.platform_can), (
        f"{driver.name} declares {ability}={declared}, its driver says the platform "
        f"{'has' if ability in driver.platform_can else 'lacks'} it")
    return bool(declared)


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
    if declares(driver, "groups"):
        await received(driver, "group_mention")


async def test_group_talk_without_a_mention_is_overheard_never_addressed(driver: Driver) -> None:
    if not declares(driver, "overhears"):
        return
    assert declares(driver, "groups")
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
    if not declares(driver, "buttons"):  # the command is shown, to be typed
        assert not declares(driver, "replace_pressed")
        assert any("/goto 1" in text for text in await driver.shown(chat))
        return
    before = await driver.shown(chat)
    recorded = payload(driver.name, "button_press")
    await driver.press(recorded["event"], keyboard)
    press = await driver.inbox.next()
    assert fields(press, recorded["expect"]) == recorded["expect"]
    await delivery.send(press.chat, Reply("moved to 1"))
    if declares(driver, "replace_pressed"):
        assert isinstance(press.origin, ButtonPress) and press.origin.message_id == keyboard.message_id
        assert await driver.shown(chat) == ["moved to 1"]  # replaced in place, nothing new
        before = []
    else:
        assert await driver.shown(chat) == [*before, "moved to 1"]  # the keyboard stays, the answer follows
    await delivery.send(press.chat, Reply("a second reply"))
    assert await driver.shown(chat) == [*before, "moved to 1", "a second reply"]


async def test_an_answers_feedback_press_is_its_command_and_never_replaces_the_answer(driver: Driver) -> None:
    chat = await dm_chat(driver)
    delivery = Delivery(driver.adapter)
    answer = await delivery.send(chat, Reply("an answer", feedback=Feedback("c0nv1d00", "a1b2c3d4")))
    assert answer is not None
    if not declares(driver, "feedback"):  # nothing drawn, nothing printed: the answer looks as it always did
        shown = await driver.shown(chat)
        assert any("an answer" in text for text in shown) and not any("/feedback" in text for text in shown)
        return
    await driver.rate(answer, good=False)
    press = await driver.inbox.next()
    assert isinstance(press, IncomingMessage) and press.text == "/feedback down c0nv1d00 a1b2c3d4" and press.is_button
    await delivery.send(press.chat, Reply("noted"))
    assert await driver.shown(chat) == ["an answer", "noted"]  # the rated answer stays as it was


async def test_a_long_reply_is_split_under_the_platform_limit_and_loses_nothing(driver: Driver) -> None:
    chat = await dm_chat(driver)
    count = max(400, driver.adapter.capabilities.max_text // 30)  # about 1.6 × the limit, at least 20 000 chars
    lines = [f"line {n:06d} of a long answer that goes on and on" for n in range(count)]
    await Delivery(driver.adapter).send(chat, Reply("\n".join(lines)))
    shown = await driver.shown(chat)
    assert len(shown) >= 2 and all(len(text) <= driver.limit for text in shown)
    assert [line for text in shown for line in text.split("\n") if line.strip()] == lines


async def test_a_stream_is_edited_in_place_and_ends_with_a_final_edit(driver: Driver) -> None:
    chat = await dm_chat(driver)
    if not declares(driver, "can_edit"):
        return
    ref = await driver.adapter.send(chat, Reply("Hel"), final=False)
    await driver.adapter.edit(ref, Reply("Hello"), final=False)
    await driver.adapter.edit(ref, Reply("Hello world"), final=True)
    assert await driver.shown(chat) == ["Hello world"]
    assert not await driver.stream_open(ref)


async def test_answers_side_by_side_are_one_message_showing_every_column(driver: Driver) -> None:
    chat = await dm_chat(driver)
    declared = driver.adapter.capabilities.columns
    assert declared == driver.columns, f"{driver.name} declares columns={declared}, its driver says {driver.columns}"
    if declared < 2:  # core sends each answer in a message of its own (bot/run/duel.py)
        return
    vote = [((Button(f"vote {i}", f"/vote {i}"),),) for i in range(declared)]
    reply = Reply("", "a duel", columns=tuple(Column(f"Answer {i}", f"text {i}", vote[i]) for i in range(declared)))
    await Delivery(driver.adapter).send(chat, reply)
    [shown] = await driver.shown(chat)
    assert all(f"Answer {i}" in shown and f"text {i}" in shown for i in range(declared))


async def test_a_rate_limited_send_is_retried_and_delivered(driver: Driver) -> None:
    chat = await dm_chat(driver)
    if not declares(driver, "refuses_sends"):  # nothing to retry: the first send is delivered
        assert await Delivery(driver.adapter).send(chat, Reply("at once")) is not None
        assert await driver.shown(chat) == ["at once"]
        return
    driver.rate_limit_next_send()
    before = driver.send_attempts()
    assert await Delivery(driver.adapter).send(chat, Reply("after the wait")) is not None
    assert await driver.shown(chat) == ["after the wait"]
    assert driver.send_attempts() - before == 2


async def test_a_chat_that_is_gone_is_a_typed_failure_and_delivery_stops_there(driver: Driver) -> None:
    chat = await dm_chat(driver)
    if not declares(driver, "refuses_sends"):  # a chat nobody reads (no tab, no waiting request) is no error
        nobody = ChatRef(driver.name, "nobody-reads-this", origin=ReplyTo("no-such-message"))
        assert (await driver.adapter.send(nobody, Reply("anyone there?"))).chat == nobody
        return
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
    assert await driver.shown(chat) == ["back again"]
