"""Feedback on answers on both backends: a rating lands only on an answer of the chat's own conversation, a
person's second press replaces their first, another person counts apart, and forgetting the chat (or a member's
part of it) takes the ratings with it."""

from __future__ import annotations

from bot.store import Store, Tally
from bot.tree.model import Message

CHAT = "slack:C1"


async def _answered(store: Store, chat: str = CHAT) -> tuple[str, Message, Message]:
    info = await store.conversations.create(chat)
    question = Message.new("user", "why?", parent_id=info.root_id)
    answer = Message.new("assistant", "because", parent_id=question.id)
    await store.conversations.append(chat, info.id, [question, answer])
    return info.id, question, answer


async def test_ratings_are_kept_per_person_on_the_answer_and_replaced_by_a_new_press(store: Store) -> None:
    conv, _, answer = await _answered(store)
    assert await store.feedback.tallies(CHAT, conv) == {}
    assert await store.feedback.rate(CHAT, conv, answer.id, "slack:U1", True)
    assert await store.feedback.tallies(CHAT, conv) == {answer.id: Tally(1, 0)}
    assert await store.feedback.rate(CHAT, conv, answer.id, "slack:U1", False)  # changed their mind
    assert await store.feedback.rate(CHAT, conv, answer.id, "slack:U2", False)
    assert await store.feedback.rate(CHAT, conv, answer.id, "slack:U3", True)
    assert await store.feedback.tallies(CHAT, conv) == {answer.id: Tally(1, 2)}


async def test_only_an_answer_of_the_chats_own_conversation_can_be_rated(store: Store) -> None:
    conv, question, answer = await _answered(store)
    other_conv, _, other_answer = await _answered(store, "slack:C2")
    assert not await store.feedback.rate(CHAT, conv, question.id, "slack:U1", True)  # a question is no answer
    assert not await store.feedback.rate(CHAT, conv, "deadbeef", "slack:U1", True)  # gone, or never stored so
    assert not await store.feedback.rate(CHAT, other_conv, other_answer.id, "slack:U1", True)  # another chat's
    assert not await store.feedback.rate(CHAT, "nope", answer.id, "slack:U1", True)
    assert await store.feedback.tallies(CHAT, conv) == {} and await store.feedback.tallies("slack:C2", other_conv) == {}


async def test_forgetting_takes_the_ratings(store: Store) -> None:
    conv, _, answer = await _answered(store)
    await store.feedback.rate(CHAT, conv, answer.id, "slack:U1", True)
    await store.feedback.rate(CHAT, conv, answer.id, "slack:U2", False)
    counts, _ = await store.forget.forget_author(CHAT, "slack", "U1")  # a member's own part of a group
    assert counts.get("feedback") == 1
    assert await store.feedback.tallies(CHAT, conv) == {answer.id: Tally(0, 1)}
    assert (await store.forget.forget_chat(CHAT))["feedback"] == 1
    assert await store.feedback.tallies(CHAT, conv) == {}
