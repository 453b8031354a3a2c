"""Conversations and message trees: durability, chat isolation, cursor and chain, atomic appends."""

from __future__ import annotations

import asyncio
import itertools
import sys

import pytest

from bot.store import ChatSettings, Store
from bot.tree.model import Conversation, Message
from tests.harness import entry_id
from tests.store.conftest import StoreFactory


async def _converse(store: Store, chat: str, turns: int = 2) -> tuple[str, list[Message]]:
    info = await store.conversations.create(chat)
    msgs: list[Message] = []
    parent = info.root_id
    for i in range(turns):
        for role in ("user", "assistant"):
            msg = Message.new(role, f"{role} {i}", parent_id=parent)
            await store.conversations.append(chat, info.id, [msg])
            msgs.append(msg)
            parent = msg.id
    return info.id, msgs


async def test_conversation_survives_close_and_reopen(new_store: StoreFactory) -> None:
    first = new_store()
    await first.open()
    conv_id, msgs = await _converse(first, "tg:1")
    call = [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]
    tool_msgs = [Message.new("assistant", "", msgs[-1].id, tool_calls=call),
                 Message.new("tool", "25C", None, tool_call_id="c1", author="Ann", interrupted=True)]
    await first.conversations.append("tg:1", conv_id, tool_msgs)
    await first.close()

    again = new_store()
    await again.open()
    try:
        conv = await again.conversations.load("tg:1", conv_id, "today's prompt")
        assert conv is not None
        assert conv.root.content == "today's prompt"
        chain = conv.get_message_chain()
        assert [m.id for m in chain[1:]] == [m.id for m in msgs] + [m.id for m in tool_msgs]
        assert chain[-2].tool_calls == call and chain[-1].tool_call_id == "c1" and chain[-1].interrupted
        assert chain[-1].author == "Ann" and chain[-2].author is None
        assert chain[-1].parent_id == tool_msgs[0].id  # parent None: attached under the cursor
        assert chain[1].created_at == msgs[0].created_at
        info = await again.conversations.get("tg:1", conv_id)
        assert info is not None and info.message_count == 6 and info.title == "user 0"
        assert info.current_message_id == tool_msgs[-1].id
        assert await again.conversations.active("tg:1") == conv_id
    finally:
        await again.close()


async def test_open_chat_creates_the_first_conversation_once_and_returns_the_path(store: Store) -> None:
    opened = await store.conversations.open_chat("tg:new")
    assert opened.settings == ChatSettings() and opened.path == []
    assert opened.conversation.message_count == 0 and opened.conversation.role == "default"
    assert opened.conversation.current_message_id == opened.conversation.root_id
    conv_id = opened.conversation.id
    msgs = [Message.new("user", "hi"), Message.new("assistant", "hello")]
    await store.conversations.append("tg:new", conv_id, msgs)
    await store.settings.update("tg:new", language="zh")
    again = await store.conversations.open_chat("tg:new")
    assert again.conversation.id == conv_id and again.settings == ChatSettings(language="zh")
    assert [(m.id, m.content) for m in again.path] == [(msgs[0].id, "hi"), (msgs[1].id, "hello")]
    assert await store.conversations.count("tg:new") == 1
    other = await store.conversations.open_chat("tg:other")
    assert other.conversation.id != conv_id and other.path == [] and other.settings == ChatSettings()


async def test_another_chats_ids_behave_like_random_ids(store: Store) -> None:
    b_conv, b_msgs = await _converse(store, "tg:B")
    await store.conversations.create("tg:A")
    before = await store.conversations.get("tg:B", b_conv)
    for conv_id in (b_conv, "0badc0de"):
        assert await store.conversations.get("tg:A", conv_id) is None
        assert await store.conversations.find("tg:A", conv_id[:4]) == []
        assert await store.conversations.load("tg:A", conv_id, "p") is None
        assert await store.conversations.message("tg:A", conv_id, b_msgs[0].id) is None
        with pytest.raises(KeyError):
            await store.conversations.chain("tg:A", conv_id, b_msgs[-1].id)
        with pytest.raises(KeyError):
            await store.conversations.set_cursor("tg:A", conv_id, b_msgs[0].id)
        with pytest.raises(KeyError):
            await store.conversations.set_active("tg:A", conv_id)
        with pytest.raises(KeyError):
            await store.conversations.append("tg:A", conv_id, [Message.new("user", "intruder", b_msgs[0].id)])
    assert await store.conversations.get("tg:B", b_conv) == before
    assert await store.conversations.active("tg:B") == b_conv
    assert await store.conversations.count("tg:A") == 1 and await store.conversations.count("tg:B") == 1
    assert [c.id for c in await store.conversations.recent("tg:A")] != [b_conv]


async def test_a_loaded_path_holds_each_id_and_role_once(store: Store) -> None:
    # sessions keep their path in memory: a parent id is its parent's own id string, a role the interned one
    conv_id, msgs = await _converse(store, "tg:lean", turns=3)
    for path in ((await store.conversations.open_chat("tg:lean")).path,
                 await store.conversations.chain("tg:lean", conv_id, msgs[-1].id)):
        assert [m.id for m in path] == [m.id for m in msgs]
        assert all(child.parent_id is parent.id for parent, child in itertools.pairwise(path))
        assert all(m.role is sys.intern(m.role) for m in path)


async def test_chain_cursor_and_branching(store: Store) -> None:
    conv_id, msgs = await _converse(store, "tg:1", turns=3)
    info = await store.conversations.get("tg:1", conv_id)
    assert info is not None
    assert await store.conversations.chain("tg:1", conv_id, info.root_id) == []
    chain = await store.conversations.chain("tg:1", conv_id, msgs[3].id)
    assert [m.id for m in chain] == [m.id for m in msgs[:4]]
    await store.conversations.set_cursor("tg:1", conv_id, msgs[1].id)
    retry = Message.new("user", "again")  # parent None: under the moved cursor
    await store.conversations.append("tg:1", conv_id, [retry])
    assert [m.id for m in await store.conversations.chain("tg:1", conv_id, retry.id)] == [
        msgs[0].id, msgs[1].id, retry.id]
    conv = await store.conversations.load("tg:1", conv_id, "p")
    assert conv is not None and [c.id for c in conv.get_children_messages(msgs[1].id)] == [msgs[2].id, retry.id]
    assert conv.current_message_id == retry.id
    stored = await store.conversations.message("tg:1", conv_id, retry.id)
    assert stored is not None and (stored.parent_id, stored.content, stored.role) == (msgs[1].id, "again", "user")
    await store.conversations.set_cursor("tg:1", conv_id, info.root_id)
    assert (await store.conversations.open_chat("tg:1")).path == []
    with pytest.raises(KeyError):
        await store.conversations.chain("tg:1", conv_id, "nope")
    with pytest.raises(KeyError):
        await store.conversations.set_cursor("tg:1", conv_id, "nope")


async def test_a_failed_append_writes_nothing(store: Store) -> None:
    conv_id, msgs = await _converse(store, "tg:1")
    good = Message.new("user", "fine", msgs[-1].id)
    with pytest.raises(KeyError):
        await store.conversations.append("tg:1", conv_id, [good, Message.new("assistant", "x", "missing")])
    clash = Message.new("user", "clash", msgs[-1].id)
    clash.id = msgs[0].id
    with pytest.raises(ValueError, match="duplicate"):  # in a batch, later messages may point at the id
        await store.conversations.append("tg:1", conv_id, [clash, Message.new("assistant", "y", clash.id)])
    with pytest.raises(ValueError, match="role"):
        await store.conversations.append("tg:1", conv_id, [Message.new("system", "no", msgs[-1].id)])
    info = await store.conversations.get("tg:1", conv_id)
    assert info is not None and info.message_count == 4 and info.current_message_id == msgs[-1].id
    assert await store.conversations.message("tg:1", conv_id, good.id) is None


async def test_listing_finding_and_titles(store: Store) -> None:
    first = await store.conversations.create("tg:1")
    second = await store.conversations.create("tg:1", role="coder")
    assert await store.conversations.active("tg:1") == second.id
    await store.conversations.append("tg:1", first.id, [Message.new("user", "x" * 100 + "\nmore", first.root_id)])
    listed = await store.conversations.recent("tg:1")
    assert [c.id for c in listed] == [first.id, second.id]  # most recently updated first
    assert listed[0].title == "x" * 59 + "…" and listed[1].role == "coder" and listed[1].title == ""
    assert [c.id for c in await store.conversations.recent("tg:1", limit=1, offset=1)] == [second.id]
    assert await store.conversations.recent("tg:1", limit=-1, offset=-5) == []
    assert await store.conversations.count("tg:1") == 2 and await store.conversations.count("tg:2") == 0
    assert [c.id for c in await store.conversations.find("tg:1", first.id[:6].upper())] == [first.id]
    assert await store.conversations.find("tg:1", "zz' OR 1=1 --") == []
    assert await store.conversations.find("tg:1", "") == []
    assert await store.conversations.find("tg:2", first.id) == []
    await store.conversations.set_active("tg:1", first.id)
    assert await store.conversations.active("tg:1") == first.id
    await store.conversations.create("tg:0")
    assert await store.conversations.summaries() == [("tg:0", 1), ("tg:1", 2)]
    assert await store.conversations.active("tg:2") is None


async def test_import_keeps_ids_replaces_a_taken_conversation_id_and_does_not_activate(store: Store) -> None:
    tree = Conversation("old prompt", id="0a0b0c0d")
    question = tree.add_message(Message.new("user", "question"))
    tree.add_message(Message.new("assistant", "answer A"))
    branch = tree.add_message(Message.new("assistant", "answer B", question.id))
    first = await store.conversations.import_tree("tg:1", tree, role="coder")
    second = await store.conversations.import_tree("tg:1", tree)
    assert first.id == "0a0b0c0d" and second.id != first.id and len(second.id) == 8
    assert (first.message_count, first.current_message_id, first.role, first.title) == (
        3, branch.id, "coder", "question")
    assert await store.conversations.active("tg:1") is None
    loaded = await store.conversations.load("tg:1", second.id, "new prompt")
    assert loaded is not None and loaded.root.content == "new prompt" and loaded.root_id == tree.root_id
    assert [m.content for m in loaded.get_children_messages(question.id)] == ["answer A", "answer B"]
    assert await store.conversations.load("tg:2", first.id, "p") is None


async def _fill(store: Store, total: int) -> None:
    """Background history in other chats and conversations, 100 messages each."""
    for c in range(total // 100):
        info = await store.conversations.create(f"tg:{c % 7}")
        parent, batch = info.root_id, []
        for i in range(100):
            batch.append(Message.new("user" if i % 2 == 0 else "assistant", f"m{i}", parent))
            parent = batch[-1].id
        await store.conversations.append(info.chat, info.id, batch)


@pytest.mark.parametrize("stored", [100, 10_000])
async def test_appends_and_chains_stay_right_in_a_big_store(store: Store, stored: int) -> None:
    """Correctness among many other conversations; how the cost scales is measured in bench/store.py."""
    await _fill(store, stored)
    info = await store.conversations.create("tg:me")
    parent, rounds = info.root_id, 200
    for i in range(rounds):
        msg = Message.new("user", f"q{i}", parent)
        await store.conversations.append("tg:me", info.id, [msg])
        parent = msg.id
    chain = await store.conversations.chain("tg:me", info.id, parent)
    assert [m.content for m in chain] == [f"q{i}" for i in range(rounds)]


async def test_a_lone_message_whose_8_hex_id_is_taken_gets_another(store: Store) -> None:
    conv_id, msgs = await _converse(store, "tg:1")
    clash = Message.new("user", "same id by chance", msgs[-1].id)
    clash.id = msgs[0].id
    await store.conversations.append("tg:1", conv_id, [clash])
    assert clash.id != msgs[0].id and len(clash.id) == 8
    info = await store.conversations.get("tg:1", conv_id)
    assert info is not None and info.current_message_id == clash.id and info.message_count == 5
    stored = await store.conversations.message("tg:1", conv_id, clash.id)
    assert stored is not None and stored.content == "same id by chance"
    original = await store.conversations.message("tg:1", conv_id, msgs[0].id)
    assert original is not None and original.content == "user 0"


async def test_messages_get_fixed_numbers_in_creation_order(store: Store) -> None:
    """Issue 12 §2: a number is given once per message, in creation order; branching never renumbers."""
    conv_id, msgs = await _converse(store, "tg:n", turns=2)  # 1..4 in a line
    assert [m.number for m in msgs] == [1, 2, 3, 4]  # the caller's objects learn their numbers
    branch = Message.new("user", "another way", parent_id=msgs[1].id)
    answer = Message.new("assistant", "sure", parent_id=None)
    await store.conversations.append("tg:n", conv_id, [branch, answer])
    assert (branch.number, answer.number) == (5, 6)
    conv = await store.conversations.load("tg:n", conv_id, "p")
    assert conv is not None
    assert {n: conv.messages[mid].content for n, mid in conv.numbered.items()} == {
        0: "p", 1: "user 0", 2: "assistant 0", 3: "user 1", 4: "assistant 1", 5: "another way", 6: "sure"}
    chain = await store.conversations.chain("tg:n", conv_id, answer.id)
    assert [m.number for m in chain] == [1, 2, 5, 6]


async def test_an_import_keeps_the_numbers_of_its_tree(store: Store) -> None:
    conv = Conversation("p")
    first = conv.add_message(Message.new("user", "q"))
    conv.add_message(Message.new("assistant", "a"))
    conv.change_current_message(first.id)
    late = conv.add_message(Message.new("assistant", "a again", number=9))
    info = await store.conversations.import_tree("tg:i", conv)
    back = await store.conversations.load("tg:i", info.id, "p")
    assert back is not None and back.numbered[9] == late.id and back.by_number(2).content == "a"  # type: ignore[union-attr]
    follow = Message.new("user", "next", parent_id=late.id)
    await store.conversations.append("tg:i", info.id, [follow])
    assert follow.number == 10


async def test_appends_at_once_to_one_conversation_get_distinct_consecutive_numbers(store: Store) -> None:
    """The numbering is read after the conversation is locked, so racing appends (a /retry beside an
    answer, two replicas) never draw the same number."""
    info = await store.conversations.create("tg:race")
    msgs = [Message.new("user", f"q{i}", parent_id=info.root_id) for i in range(20)]
    await asyncio.gather(*(store.conversations.append("tg:race", info.id, [m]) for m in msgs))
    assert sorted(m.number for m in msgs) == list(range(1, 21))  # type: ignore[type-var]
    conv = await store.conversations.load("tg:race", info.id, "p")
    assert conv is not None and sorted(conv.numbered) == list(range(21))


async def test_an_answer_and_the_inbox_entry_it_answers_are_stored_together(store: Store) -> None:
    conv_id, msgs = await _converse(store, "tg:f", turns=1)
    entry = entry_id(await store.inbox.accept("tg:f:1", "tg:f", "{}"))
    assert entry is not None
    with pytest.raises(KeyError):  # all or nothing: a failed append keeps the entry
        await store.conversations.append("tg:f", conv_id, [Message.new("assistant", "x", "missing")], finishes=entry)
    assert [e.id for e in await store.inbox.unfinished()] == [entry]
    answer = Message.new("assistant", "done", msgs[-1].id)
    await store.conversations.append("tg:f", conv_id, [answer], finishes=entry)
    assert await store.inbox.unfinished() == []
    stored = await store.conversations.message("tg:f", conv_id, answer.id)
    assert stored is not None and stored.content == "done" and stored.number == 3
