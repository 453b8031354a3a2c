"""Branch summaries: stored on a node of the chat's own conversation, replaced in place, never across chats."""

from __future__ import annotations

import pytest

from bot.store import Store
from bot.tree.model import Message

A, B = "test:a", "test:b"


async def test_summaries_live_on_nodes_of_the_chats_own_conversations(store: Store) -> None:
    info = await store.conversations.create(A)
    first, second = Message.new("user", "hi"), Message.new("assistant", "hello")
    await store.conversations.append(A, info.id, [first, second])
    made = await store.summaries.put(A, info.id, second.id, "they greeted", 2)
    assert (made.message_id, made.content, made.covered) == (second.id, "they greeted", 2)
    again = await store.summaries.put(A, info.id, second.id, "they said hello", 2)  # a redo replaces it
    await store.summaries.put(A, info.id, first.id, "a greeting", 1)
    found = await store.summaries.of_conversation(A, info.id)
    assert {k: (v.content, v.covered) for k, v in found.items()} == {
        second.id: ("they said hello", 2), first.id: ("a greeting", 1)}
    assert found[second.id].created_at == again.created_at
    assert await store.summaries.of_conversation(B, info.id) == {}
    with pytest.raises(KeyError):
        await store.summaries.put(B, info.id, second.id, "from another chat", 2)
    with pytest.raises(KeyError):
        await store.summaries.put(A, info.id, "nosuchid", "no such node", 1)
