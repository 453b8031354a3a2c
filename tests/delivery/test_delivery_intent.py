"""The adapter contract carries intent: final flags on sends and edits, and the reply to a button press."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from bot.adapter import SendFailed
from bot.delivery import Delivery, StreamWriter
from bot.delivery.pacing import Pacer
from bot.messages import ButtonPress, ChatRef, Interaction, ReplyTo, SentRef
from bot.replies import Reply
from tests.harness import ROOMY, RecordingAdapter, wait_for

PRESS = ChatRef("recording", "c1", origin=ButtonPress("press-1", "m-pressed"))


async def test_the_first_reply_to_a_press_replaces_the_pressed_message_and_later_ones_are_new() -> None:
    rec = RecordingAdapter()
    delivery = Delivery(rec)
    first = await delivery.send(PRESS, Reply("moved"))
    second = await delivery.send(PRESS, Reply("and more"))
    assert first is not None and first.message_id == "m-pressed"
    assert [(ref.message_id, reply.text, final) for ref, reply, final in rec.edits] == [("m-pressed", "moved", True)]
    assert [reply.text for _, reply in rec.sent] == ["and more"]
    assert second is not None and second.message_id != "m-pressed"


async def test_a_pressed_message_that_cannot_be_edited_is_answered_anew_once() -> None:
    class Refusing(RecordingAdapter):
        async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
            raise SendFailed("message to edit not found")

    rec = Refusing()
    delivery = Delivery(rec)
    await delivery.send(PRESS, Reply("moved"))
    await delivery.send(PRESS, Reply("again"))
    assert [reply.text for _, reply in rec.sent] == ["moved", "again"]


async def test_a_platform_that_cannot_replace_gets_a_new_message() -> None:
    rec = RecordingAdapter(dataclasses.replace(ROOMY, replace_pressed=False))
    await Delivery(rec).send(PRESS, Reply("moved"))
    assert rec.edits == [] and [reply.text for _, reply in rec.sent] == ["moved"]


async def test_a_stream_starts_unfinished_and_ends_with_a_final_edit() -> None:
    rec = RecordingAdapter()
    chat = ChatRef("recording", "c1", origin=ReplyTo("in-1"))
    writer = StreamWriter(Delivery(rec), chat)
    writer.feed("Hello")
    await wait_for(lambda: bool(rec.sent))  # the first text goes out after a short grace
    await writer.finish("Hello world")
    assert rec.sent_final == [False]
    assert [(reply.text, final) for _, reply, final in rec.edits] == [("Hello world", True)]


async def test_a_finished_stream_with_unchanged_text_is_closed_only_where_the_platform_needs_it() -> None:
    for closes, expected_edits in ((False, []), (True, [("all of it", True)])):
        rec = RecordingAdapter(dataclasses.replace(ROOMY, closes_streams=closes))
        writer = StreamWriter(Delivery(rec), ChatRef("recording", "c1"))
        writer.feed("all of it")
        await wait_for(lambda r=rec: bool(r.sent))  # type: ignore[misc]
        await writer.finish()
        assert rec.sent_final == [False]
        assert [(reply.text, final) for _, reply, final in rec.edits] == expected_edits


async def test_a_short_answer_complete_within_the_grace_is_sent_once_and_never_edited() -> None:
    rec = RecordingAdapter()
    writer = StreamWriter(Delivery(rec), ChatRef("recording", "c1"))
    for delta in ("Sure", ", here", " it is."):
        writer.feed(delta)
    await writer.finish("Sure, here it is.")
    assert [(reply.text, final) for (_, reply), final in zip(rec.sent, rec.sent_final, strict=True)] == [
        ("Sure, here it is.", True)]
    assert rec.edits == []


def test_threads_and_interactions_get_their_own_budget_where_the_platform_says_so() -> None:
    caps = dataclasses.replace(ROOMY, burst=1, rate=0.001)
    channel = ChatRef("recording", "c1", None, True)
    thread = ChatRef("recording", "c1", "t1", True)
    command = ChatRef("recording", "c1", None, True, Interaction("i-1"))
    shared, apart = Pacer(caps), Pacer(dataclasses.replace(caps, threads_paced_apart=True,
                                                           interactions_paced_apart=True))
    for pacer in (shared, apart):
        slot = pacer.try_take(channel, reserve=0)
        assert slot is not None
        slot.release()
    assert shared.try_take(thread, reserve=0) is None and shared.try_take(command, reserve=0) is None
    assert apart.try_take(thread, reserve=0) is not None and apart.try_take(command, reserve=0) is not None


async def test_a_resumed_stream_edits_the_messages_an_earlier_process_sent() -> None:
    rec, noted = RecordingAdapter(), []

    async def note(ids: list[str]) -> None:
        noted.append(ids)

    writer = StreamWriter(Delivery(rec), ChatRef("recording", "c1"), ["m-old"], note)
    writer.feed("The whole")
    await wait_for(lambda: bool(rec.edits))  # no grace: the message is already there
    await writer.finish("The whole answer")
    assert rec.sent == [] and noted == []
    assert [(ref.message_id, reply.text) for ref, reply, _ in rec.edits][-1] == ("m-old", "The whole answer")


async def test_a_resumed_message_that_cannot_be_edited_is_sent_anew_once() -> None:
    class Refusing(RecordingAdapter):
        async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
            raise SendFailed("Bad Request: message to edit not found")

    rec = Refusing()
    writer = StreamWriter(Delivery(rec), ChatRef("recording", "c1"), ["m-deleted"])
    await writer.finish("Still answered")
    assert [reply.text for _, reply in rec.sent] == ["Still answered"]


async def test_a_long_reply_notes_each_message_as_it_is_sent_but_the_last() -> None:
    caps = dataclasses.replace(ROOMY, max_text=40)
    rec, noted = RecordingAdapter(caps), []

    async def note(ids: list[str]) -> None:
        noted.append(ids)

    writer = StreamWriter(Delivery(rec), ChatRef("recording", "c1"), on_sent=note)
    writer.feed("the first part of it")
    await wait_for(lambda: bool(noted))  # a streamed message is noted as soon as it is out
    await writer.finish(" ".join(["the first part of it"] * 6))
    assert len(rec.sent) == 4
    assert [len(ids) for ids in noted] == [1, 2, 3]  # each message but the last, before the next went out
    assert len(set(noted[-1])) == 3 and noted[-1][:2] == noted[1] and noted[1][0] == noted[0][0]


async def test_typing_is_sent_at_most_once_per_interval_in_each_chat(monkeypatch: pytest.MonkeyPatch) -> None:
    """Back-to-back answers in one chat share one "typing…": each call would spend the platform's budget."""
    monkeypatch.setattr("bot.delivery.sending.TYPING_EVERY", 0.2)
    rec = RecordingAdapter()
    delivery = Delivery(rec)
    chat, other, thread = ChatRef("recording", "c1"), ChatRef("recording", "c2"), ChatRef("recording", "c1", "t1")
    for target in (chat, chat, other, thread, chat):
        await delivery.typing(target)
    assert rec.typings == [chat, other, thread]
    await asyncio.sleep(0.25)
    await delivery.typing(chat)
    assert rec.typings == [chat, other, thread, chat]
    assert len(delivery._typed) == 1  # chats not typed at lately are forgotten
