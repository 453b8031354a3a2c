"""Background tasks on both backends: a task and its run's inbox entry are stored together, the chat's limit is
kept, another chat's id is not found, a task ends once, forgetting a chat takes its tasks; a side branch written
beside a conversation (`attach`) leaves its cursor where it is."""

from __future__ import annotations

import pytest

from bot.messages import ChatRef
from bot.store import Store
from bot.store.tasks import NewTask, TooManyTasks, task_of
from bot.tree.model import Message

WHERE = ChatRef("telegram", "1", "t7", True, identity="support")


def spec(prompt: str, chat: str = "telegram:1", tools: tuple[str, ...] | None = None) -> NewTask:
    return NewTask(chat, "conv1", "m1", prompt, WHERE, "u1", "Ann", "zh", "critic", "m-2", tools)


async def test_a_task_is_stored_with_its_run_queued_and_ends_once(store: Store) -> None:
    first, entry = await store.tasks.start(spec("dig", tools=("recall",)), limit=2)
    assert first.state == "running" and first.label == f"t{first.id}"
    assert first.spec == spec("dig", tools=("recall",))  # the place, the asker, role, model and tools come back
    waiting = await store.inbox.waiting("telegram:1")
    assert [(e.id, task_of(e.event)) for e in waiting] == [(entry, first.id)]
    second, _ = await store.tasks.start(spec("sift", tools=()), limit=2)
    assert (await store.tasks.get("telegram:1", second.id)).spec.tools == ()  # type: ignore[union-attr]
    with pytest.raises(TooManyTasks):
        await store.tasks.start(spec("more"), limit=2)
    assert len(await store.inbox.waiting("telegram:1")) == 2  # the refused one queued nothing
    other, _ = await store.tasks.start(spec("elsewhere", chat="telegram:2"), limit=2)  # another chat's own limit
    assert await store.tasks.get("telegram:1", other.id) is None
    await store.tasks.noted("telegram:1", first.id, branch_id="b1")
    await store.tasks.noted("telegram:1", first.id, progress_id="p1")
    assert await store.tasks.end("telegram:1", first.id, "done", "the answer")
    assert not await store.tasks.end("telegram:1", first.id, "cancelled")  # ended already
    done = await store.tasks.get("telegram:1", first.id)
    assert done is not None and (done.state, done.result, done.branch_id, done.progress_id) == (
        "done", "the answer", "b1", "p1")
    assert done.finished_at is not None and done.created_at <= done.finished_at
    third, _ = await store.tasks.start(spec("now there is room"), limit=2)
    assert [t.id for t in await store.tasks.recent("telegram:1")] == [third.id, second.id, first.id]
    assert await store.forget.forget_author("telegram:1", "telegram", "u1") == ({"tasks": 3}, [])  # their prompts
    assert await store.tasks.recent("telegram:1") == []
    await store.tasks.start(spec("again"), limit=2)
    erased = await store.forget.forget_chat("telegram:1")
    assert erased["tasks"] == 1
    assert await store.tasks.recent("telegram:1") == [] and len(await store.tasks.recent("telegram:2")) == 1


async def test_a_side_branch_attached_beside_a_conversation_keeps_its_cursor(store: Store) -> None:
    info = await store.conversations.create("telegram:1")
    question = Message.new("user", "hi")
    await store.conversations.append("telegram:1", info.id, [question])
    aside = Message.new("user", "[t1] dig", parent_id=question.id)
    await store.conversations.attach("telegram:1", info.id, [aside])
    await store.conversations.attach("telegram:1", info.id, [Message.new("assistant", "dug", parent_id=aside.id)])
    await store.conversations.append("telegram:1", info.id, [Message.new("assistant", "hello")])  # the main line
    after = await store.conversations.get("telegram:1", info.id)
    assert after is not None and after.message_count == 4
    path = await store.conversations.chain("telegram:1", info.id, after.current_message_id)
    assert [m.content for m in path] == ["hi", "hello"]  # the branch grew beside it, numbered in turn
    conv = await store.conversations.load("telegram:1", info.id, "")
    assert conv is not None and [conv.messages[i].content for i in conv.children[question.id]] == ["[t1] dig", "hello"]
    with pytest.raises(KeyError):
        await store.conversations.attach("telegram:1", info.id, [Message.new("user", "x", parent_id="nope")])
