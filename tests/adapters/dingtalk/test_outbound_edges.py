"""Replies when the card path is off: a card finished after a restart, unchanged and refused edits, cards
switched off for a while after a refusal, group messages by the robot OpenAPI, and HTTP mode's card route."""

from __future__ import annotations

import pytest

from adapters.dingtalk import render
from bot.adapter import SendFailed
from bot.messages import ChatRef, ReplyTo, SentRef
from bot.replies import Reply
from tests.adapters.dingtalk.conftest import Make
from tests.adapters.dingtalk.test_outbound import NO_CARDS, dm
from tests.fakes.dingtalk_api import CLIENT_ID, FakeDingTalk

GROUP = ChatRef("dingtalk", "cid-group-1", None, True)


async def test_a_card_left_streaming_by_the_last_run_is_finished_by_the_next(
        make: Make, dingtalk: FakeDingTalk) -> None:
    before, chat = await dm(make, dingtalk)
    ref = await before.send(chat, Reply("half"), final=False)
    await before.stop()
    after, _, _ = await make()  # a restart: the new process knows nothing of the card
    await after.edit(SentRef(ref.chat, ref.message_id), Reply("the whole answer"), final=True)
    card = dingtalk.cards[ref.message_id].params
    assert (card["msgContent"], card["flowStatus"]) == ("the whole answer", render.FINISHED)


async def test_an_unchanged_draft_makes_no_call_and_a_refused_edit_is_tried_again(
        make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, chat = await dm(make, dingtalk)
    ref = await adapter.send(chat, Reply("draft"), final=False)
    await adapter.edit(ref, Reply("draft"), final=False)
    assert dingtalk.calls_to("/card/streaming") == []
    dingtalk.fail("/card/instances", 400, "InvalidParameter.CardData")
    with pytest.raises(SendFailed, match="InvalidParameter"):
        await adapter.edit(ref, Reply("done"), final=True)
    await adapter.edit(ref, Reply("done"), final=True)  # not taken for shown: the retry makes the call
    assert dingtalk.cards[ref.message_id].params["flowStatus"] == render.FINISHED


async def test_after_a_card_refusal_cards_are_not_tried_again_for_a_while(make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, chat = await dm(make, dingtalk)
    dingtalk.fail("createAndDeliver", 403, NO_CARDS)
    await adapter.send(chat, Reply("one"))
    await adapter.send(chat, Reply("two"))
    assert len(dingtalk.calls_to("createAndDeliver")) == 1
    assert dingtalk.shown("staff-ann") == ["one", "two"]


async def test_without_cards_a_group_is_answered_by_the_robots_group_message(
        make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, _, _ = await make()
    dingtalk.fail("createAndDeliver", 403, NO_CARDS)
    unknown = ChatRef("dingtalk", GROUP.chat_id, None, True, ReplyTo("msg-never-seen"))  # no session webhook for it
    await adapter.send(unknown, Reply("to the group"))
    (sent,) = dingtalk.calls_to("/robot/groupMessages/send")
    assert (sent.body["openConversationId"], sent.body["robotCode"]) == (GROUP.chat_id, CLIENT_ID)
    dingtalk.fail("/robot/groupMessages/send", 400, "InvalidParameter.Robot")
    with pytest.raises(SendFailed, match=r"InvalidParameter\.Robot"):
        await adapter.send(GROUP, Reply("again"))


async def test_in_http_mode_a_card_names_its_callback_route(make: Make, dingtalk: FakeDingTalk) -> None:
    adapter, _, _ = await make("http")
    await adapter.send(GROUP, Reply("pick one"))
    (created,) = dingtalk.calls_to("createAndDeliver")
    assert (created.body["callbackType"], created.body["callbackRouteKey"]) == ("HTTP", CLIENT_ID)
    assert created.body["openSpaceId"] == f"dtv1.card//IM_GROUP.{GROUP.chat_id}"
