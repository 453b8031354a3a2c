"""Streaming by drafts (an adapter that is Drafting): in one-to-one chats a growing answer is the platform's draft,
which costs no message budget, and the answer ends as one message; refusals and 429s are remembered."""

from __future__ import annotations

import asyncio
import dataclasses
import time

from bot.adapter import DraftsRefused, RateLimited
from bot.delivery import Delivery, StreamWriter
from bot.messages import ChatRef, SentRef
from bot.replies import Reply
from tests.harness import ROOMY, RecordingAdapter, wait_for

DM, OTHER_DM = ChatRef("recording", "c1"), ChatRef("recording", "c2")
GROUP = ChatRef("recording", "g1", is_group=True)
WORDS = [f"word{n}" for n in range(12)]


class DraftingPlatform(RecordingAdapter):
    """The in-memory platform with drafts: `drafts` holds (chat, draft id, text) per update."""

    draft_interval = 0.02
    draft_life = 0.2  # renewed after 0.12 s unchanged

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.drafts: list[tuple[str, str, str]] = []
        self.refuse: list[DraftsRefused | RateLimited] = []  # raised by the next draft calls, one each
        self.asked: list[float] = []  # when each draft call came, refused or not

    async def draft(self, chat: ChatRef, reply: Reply, ref: SentRef | None) -> SentRef:
        self.asked.append(time.monotonic())
        if self.refuse:
            raise self.refuse.pop(0)
        ref = ref or SentRef(chat, f"draft-{len(self.drafts)}", draft=True)
        self.drafts.append((chat.chat_id, ref.message_id, reply.text))
        return ref


async def stream(delivery: Delivery, chat: ChatRef, noted: list[list[str]] | None = None, words: list[str] = WORDS,
                 sharing: int = 1) -> None:
    async def note(ids: list[str]) -> None:
        if noted is not None:
            noted.append(ids)

    writer = StreamWriter(delivery, chat, on_sent=note, sharing=sharing)
    for word in words:
        writer.feed(f"{word} ")
        await asyncio.sleep(0.03)
    await writer.finish(" ".join(words))


async def test_a_one_to_one_stream_is_drafts_and_one_message_outside_the_budget() -> None:
    # one message per chat and hardly any refill: a stream by edits would wait minutes for its final edit
    rec = DraftingPlatform(dataclasses.replace(ROOMY, burst=1, rate=0.001))
    noted: list[list[str]] = []
    async with asyncio.timeout(5):
        await stream(Delivery(rec), DM, noted)
    assert len(rec.drafts) >= 3 and len({draft_id for _, draft_id, _ in rec.drafts}) == 1
    assert all(" ".join(WORDS).startswith(text.strip()) for _, _, text in rec.drafts)
    assert [reply.text for _, reply in rec.sent] == [" ".join(WORDS)] and rec.sent_final == [True]
    assert rec.edits == [] and noted == []  # a draft is never noted: after a restart nothing refers to it


async def test_an_answer_its_draft_shows_whole_already_is_still_sent() -> None:
    rec = DraftingPlatform()
    writer = StreamWriter(Delivery(rec), DM)
    writer.feed("Hello world")
    await wait_for(lambda: bool(rec.drafts))
    await writer.finish()  # the same text as the draft: it must still become a message
    assert [reply.text for _, reply in rec.sent] == ["Hello world"]


async def test_a_long_answer_notes_each_part_once_it_is_a_message() -> None:
    rec = DraftingPlatform(dataclasses.replace(ROOMY, max_text=40))
    noted: list[list[str]] = []
    await stream(Delivery(rec), DM, noted)
    assert len(rec.sent) >= 2 and rec.edits == []
    sent_ids = [ref for ref in rec.visible if not ref.startswith("draft")]
    assert noted and noted[-1] == sent_ids[:-1]  # every part but the last, never a draft's id
    assert " ".join(reply.text for _, reply in rec.sent).split() == WORDS


async def test_groups_and_shared_streams_are_messages_edited() -> None:
    rec = DraftingPlatform()
    await stream(Delivery(rec), GROUP)
    await stream(Delivery(rec), DM, sharing=2)  # a duel's answers side by side: the chat shows one draft
    assert rec.drafts == [] and len(rec.sent) == 2 and rec.sent_final == [False, False] and rec.edits


async def test_a_refused_chat_streams_by_edits_from_then_on() -> None:
    rec = DraftingPlatform()
    rec.refuse.append(DraftsRefused("no drafts here", everywhere=False))
    delivery = Delivery(rec)
    await stream(delivery, DM)
    await stream(delivery, DM)
    assert rec.sent_final == [False, False] and rec.edits  # both answers: a send, then edits
    assert [reply.text for _, reply, final in rec.edits if final] == [" ".join(WORDS)] * 2
    assert rec.drafts == []  # asked once, remembered
    await stream(delivery, OTHER_DM)
    assert rec.drafts and rec.drafts[0][0] == "c2"  # another chat still drafts


async def test_drafts_refused_mid_answer_are_not_asked_again_and_the_answer_arrives() -> None:
    rec = DraftingPlatform()
    delivery = Delivery(rec)
    writer = StreamWriter(delivery, DM)
    writer.feed("first words")
    await wait_for(lambda: bool(rec.drafts))
    rec.refuse.append(DraftsRefused("no more drafts here", everywhere=False))
    for word in WORDS:
        writer.feed(f" {word}")
        await asyncio.sleep(0.03)
    await writer.finish()
    assert len(rec.asked) == 2  # the refused update, then none
    assert [reply.text for _, reply in rec.sent] == [f"first words {' '.join(WORDS)}"] and rec.edits == []


async def test_a_platform_without_drafts_is_remembered_for_every_chat() -> None:
    rec = DraftingPlatform()
    rec.refuse.append(DraftsRefused("no such method", everywhere=True))
    delivery = Delivery(rec)
    await stream(delivery, DM)
    await stream(delivery, OTHER_DM)
    assert rec.drafts == [] and rec.sent_final == [False, False]


async def test_a_429_on_a_draft_holds_the_chats_drafts_and_the_answer_still_arrives() -> None:
    rec = DraftingPlatform()
    rec.refuse.append(RateLimited(0.2))
    await stream(Delivery(rec), DM)
    assert [reply.text for _, reply in rec.sent] == [" ".join(WORDS)]
    assert rec.drafts and rec.asked[1] - rec.asked[0] >= 0.2  # no draft asked for while held, then drafting again


async def test_a_finished_draft_that_cannot_be_sent_is_retried_as_a_message() -> None:
    rec = DraftingPlatform()
    delivery = Delivery(rec)
    writer = StreamWriter(delivery, DM)
    writer.feed("partial")
    await wait_for(lambda: bool(rec.drafts))
    rec.fail_sends.append(RateLimited(0.05))
    await writer.finish("partial, then whole")
    assert [reply.text for _, reply in rec.sent] == ["partial, then whole"] and rec.attempts["send"] == 2


async def test_a_draft_unchanged_while_the_model_calls_tools_is_shown_again_until_the_answer() -> None:
    rec = DraftingPlatform()
    writer = StreamWriter(Delivery(rec), DM)
    writer.feed("Let me look that up")
    await asyncio.sleep(1.0)  # a long tool call: no new text, and the platform drops a draft left alone
    assert len(rec.drafts) >= 5 and {text for _, _, text in rec.drafts} == {"Let me look that up"}
    assert max(b - a for a, b in zip(rec.asked, rec.asked[1:], strict=False)) < DraftingPlatform.draft_life
    await writer.finish("Let me look that up: found it")
    shown = len(rec.asked)
    await asyncio.sleep(0.5)
    assert len(rec.asked) == shown and [reply.text for _, reply in rec.sent] == ["Let me look that up: found it"]


async def test_a_draft_of_a_run_that_was_cut_is_not_renewed() -> None:
    rec = DraftingPlatform()

    async def run() -> None:
        writer = StreamWriter(Delivery(rec), DM)
        writer.feed("thinking about it")
        await asyncio.sleep(60)  # /stop cuts it here: no finish

    cut = asyncio.create_task(run())
    await wait_for(lambda: bool(rec.drafts))
    cut.cancel()
    await asyncio.sleep(0.5)
    assert len(rec.asked) == 1
