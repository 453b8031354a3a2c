"""Streaming spends only the budget a chat has to spare (Telegram's shape: 3 at once, then 1 a second): a group
asked again and again gets its answers whole, one call each, so no partial message takes the slot the next
answer's final needs; two topics of one forum share its budget, so the second stream's partial waits for room
beyond the first one's promised final; a quiet chat, or an answer longer than the budget takes to refill,
streams."""

from __future__ import annotations

import asyncio
import dataclasses

from bot.delivery import Delivery, StreamWriter
from bot.messages import ChatRef
from tests.harness import ROOMY, RecordingAdapter

TELEGRAM_LIKE = dataclasses.replace(ROOMY, burst=3, rate=1.0, edit_interval=0.05, group_edit_interval=0.05)
GROUP = ChatRef("recording", "g1", is_group=True)
WORDS = [f"w{n}" for n in range(6)]


async def answer(delivery: Delivery, chat: ChatRef, words: list[str] = WORDS, gap: float = 0.03) -> None:
    writer = StreamWriter(delivery, chat)
    for word in words:
        writer.feed(f"{word} ")
        await asyncio.sleep(gap)
    await writer.finish(" ".join(words))


def partials(rec: RecordingAdapter) -> int:
    return rec.sent_final.count(False)


async def test_a_group_asked_as_fast_as_its_budget_refills_gets_whole_answers_after_its_first() -> None:
    # ten times Telegram's pace: a question every 0.1 s, the budget refilling 0.9 a question; an answer takes 60 ms,
    # in which the budget comes back to what a partial and a final need, yet the next answer needs it then
    rec = RecordingAdapter(dataclasses.replace(TELEGRAM_LIKE, rate=10.0, edit_interval=1.0, group_edit_interval=1.0))
    delivery = Delivery(rec)
    async with asyncio.timeout(10):
        for _ in range(6):
            started = asyncio.get_running_loop().time()
            await answer(delivery, GROUP, gap=0.01)
            await asyncio.sleep(started + 0.1 - asyncio.get_running_loop().time())
    assert rec.sent_final == [False] + [True] * 5  # the first answer streamed: the chat was quiet
    assert len({ref.message_id for ref, _, _ in rec.edits}) == 1  # the others: one send each, never edited
    assert all(reply.text == " ".join(WORDS) for _, reply in rec.sent[1:])


async def test_two_topics_sharing_a_budget_do_not_take_each_others_final() -> None:
    rec = RecordingAdapter(TELEGRAM_LIKE)
    delivery = Delivery(rec)
    topics = [dataclasses.replace(GROUP, thread_id=str(n)) for n in (7, 8)]  # threads paced with their chat
    async with asyncio.timeout(10):
        await asyncio.gather(*(answer(delivery, topic) for topic in topics))
    assert partials(rec) == 1  # one topic streamed; the other's answer went whole, its final not taken
    assert [reply.text for ref, reply, final in rec.edits if final] == [" ".join(WORDS)]
    assert [reply.text for _, reply in rec.sent if reply.text.endswith("w5")] == [" ".join(WORDS)]


async def test_a_long_answer_in_a_busy_chat_streams_once_the_budget_has_refilled() -> None:
    rec = RecordingAdapter(dataclasses.replace(TELEGRAM_LIKE, rate=10.0))  # refilled in 3 / 9 s
    delivery = Delivery(rec)
    async with asyncio.timeout(10):
        for _ in range(2):
            await answer(delivery, GROUP, WORDS[:2], gap=0.0)  # two answers in a moment: the chat is busy
        started = len(rec.sent)
        await answer(delivery, GROUP, [f"w{n}" for n in range(30)], gap=0.03)  # 0.9 s, longer than the refill
    assert rec.sent_final[started:] == [False]  # its partial went out, then edits to the whole answer
    assert rec.edits[-1][1].text.endswith("w29") and rec.edits[-1][2]
