"""Windows on new messages apart from edits: one over all chats (an API's calls per second per app, such as
DingTalk's card creations) and one per chat that one-to-one chats obey too (WeCom's messages a minute into any
conversation). Edits never count against them, and a chat's window leaves the other chats theirs. A window over
all chats keeps a margin (replicas share it); a chat's own window is spent to its limit."""

from __future__ import annotations

import asyncio
import dataclasses

from bot.delivery.pacing import Pacer
from bot.messages import ChatRef
from tests.harness import ROOMY

LIMIT = 10


def opened(pacer: Pacer, chat: ChatRef, new_message: bool = True) -> int:
    """How many calls the pacer allows at once (each completed at once)."""
    count = 0
    while count < 10 * LIMIT and (slot := pacer.try_take(chat, new_message=new_message, reserve=0)) is not None:
        slot.release()
        count += 1
    return count


def test_a_sends_window_holds_new_messages_over_all_chats_and_leaves_edits_alone() -> None:
    pacer = Pacer(dataclasses.replace(ROOMY, send_window=(LIMIT, 1.0)))
    sent = 0
    while pacer.try_take(ChatRef("recording", f"c{sent}"), new_message=True, reserve=0) is not None:
        sent += 1
    assert sent == LIMIT
    assert pacer.try_take(ChatRef("recording", "another"), new_message=True, reserve=0) is None
    assert opened(pacer, ChatRef("recording", "c0"), new_message=False) == 10 * LIMIT  # edits are not held


def test_a_chat_window_holds_a_one_to_one_chat_and_groups_alike_and_no_other_chat() -> None:
    pacer = Pacer(dataclasses.replace(ROOMY, group_send_window=None, chat_send_window=(LIMIT, 60.0)))
    single, group = ChatRef("recording", "u1"), ChatRef("recording", "g1", is_group=True)
    assert opened(pacer, single) == LIMIT and opened(pacer, group) == LIMIT
    assert opened(pacer, single, new_message=False) == 10 * LIMIT  # a stream's refreshes are no new messages
    assert opened(pacer, ChatRef("recording", "u2")) == LIMIT


async def test_a_chats_bucket_refills_only_while_none_of_its_calls_is_in_flight() -> None:
    """The platform saw a call somewhere before it completed: time in flight earns the chat nothing."""
    pacer = Pacer(dataclasses.replace(ROOMY, burst=1, rate=20.0))
    chat = ChatRef("recording", "u1")
    slot = await pacer.take(chat, new_message=True)
    await asyncio.sleep(0.2)  # four tokens' time, spent in flight
    slot.release()
    assert pacer.try_take(chat, new_message=True, reserve=0) is None
    (await asyncio.wait_for(pacer.take(chat, new_message=True), 1.0)).release()  # a token's time after it
