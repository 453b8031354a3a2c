"""An edits window (a platform limiting an update method per workspace, apart from sends): partial first
messages promise their final edits, intermediate updates leave room for every promised final, finals wait for
the window, and sends never count against it."""

from __future__ import annotations

import asyncio
import dataclasses

from bot.adapter import RateLimited
from bot.delivery import Delivery
from bot.delivery.pacing import Pacer
from bot.messages import ChatRef
from bot.replies import Reply
from tests.harness import ROOMY, RecordingAdapter

LIMIT = 10


def pacer() -> Pacer:
    return Pacer(dataclasses.replace(ROOMY, edit_window=(LIMIT, 60.0)))


def chat(n: int) -> ChatRef:
    return ChatRef("recording", f"c{n}", None, True)


async def test_partial_messages_stop_once_every_edit_left_is_promised_and_the_finals_still_go() -> None:
    paced = pacer()
    opened = 0
    while (slot := paced.try_take(chat(opened), new_message=True, reserve=0)) is not None:
        slot.release()
        opened += 1
    assert opened == LIMIT  # the next answer goes out whole, with no final edit to wait for
    assert paced.try_take(chat(0), reserve=0) is None  # no intermediate edit takes a promised final's room
    finals = [await asyncio.wait_for(paced.take(chat(n)), 0.5) for n in range(opened)]  # none waits
    for slot in finals:
        slot.release()
    assert paced.try_take(chat(0), reserve=0) is None  # the window is spent: edits wait for it to pass
    for n in range(LIMIT):  # whole answers are sends: the edits window does not hold them back
        (await asyncio.wait_for(paced.take(chat(100 + n), new_message=True), 0.5)).release()


async def test_intermediate_edits_keep_the_reserve_and_a_429_does_not_close_the_window() -> None:
    paced = pacer()
    opened = paced.try_take(chat(0), new_message=True, reserve=0)
    assert opened is not None
    opened.release()
    edits = 0
    while (slot := paced.try_take(chat(edits + 1), reserve=1)) is not None:
        slot.release()
        edits += 1
    assert edits == LIMIT - 1 - 1  # one promised final, one more in reserve
    paced.penalize(chat(1), 30.0)  # the chat is short; the method's window is not
    final = await asyncio.wait_for(paced.take(chat(0)), 0.5)
    final.release()


async def test_a_partial_message_the_platform_refused_promises_nothing() -> None:
    rec = RecordingAdapter(dataclasses.replace(ROOMY, edit_window=(LIMIT, 60.0)))
    delivery = Delivery(rec)
    rec.fail_sends = [RateLimited(1.0)] * LIMIT
    for n in range(LIMIT):  # every one refused: none holds back an edit
        assert await delivery.send_if_budget(chat(n), Reply("partial")) is None
    assert await delivery.send_if_budget(chat(50), Reply("partial")) is not None
