"""Forgetting on both backends: every table of the database is either erased by chat (or by person) or named
as kept with a reason, and a chat's rows go while another chat's stay."""

from __future__ import annotations

from datetime import UTC, date, datetime

from bot.store import Store
from bot.store.forget import BY_CHAT, BY_USER, ERASED, KEEP, KEEP_PREFIXES
from bot.store.group_context import HeardLine
from bot.store.usage import UsageRecord, UsageTotals
from bot.tree.model import AttachedFile, Message


async def test_every_table_says_whether_it_holds_someones_data(store: Store) -> None:
    known = {table for table, _ in (*BY_CHAT, *BY_USER)} | set(KEEP)
    unclassified = [t for t in await store.forget.tables() if t not in known and not t.startswith(KEEP_PREFIXES)]
    assert not unclassified, f"add these to bot/store/forget.py (BY_CHAT, BY_USER or KEEP): {unclassified}"


async def fill(store: Store, chat: str) -> str:
    info = await store.conversations.create(chat)
    user = Message.new("user", f"secret of {chat}", parent_id=info.root_id)
    await store.conversations.append(chat, info.id, [user, Message.new("assistant", "noted", parent_id=user.id)])
    await store.memories.add(chat, "fact", f"{chat} likes tea")
    await store.summaries.put(chat, info.id, user.id, "a summary", 1)
    await store.group_context.keep(chat, "m1", HeardLine(1.0, "Bob", "overheard"), limit=10, since=0.0)
    await store.approval_rules.add(chat, None, "shell", "ls", "admin")
    await store.settings.update(chat, language="zh")
    await store.usage.add([UsageRecord(date(2026, 12, 1), chat, "telegram:42", "m", UsageTotals(1, 10, 5, 0.01))])
    await store.inbox.accept(f"{chat}:e1", chat, "{}")
    return info.id


async def test_a_chat_is_erased_and_another_kept(store: Store) -> None:
    await fill(store, "telegram:1")
    await fill(store, "telegram:2")
    counts = await store.forget.forget_chat("telegram:1")
    assert {"messages", "conversations", "memories", "summaries", "group_context", "approval_rules", "usage",
            "inbox", "chats"} <= set(counts)
    assert counts["messages"] == 2 and counts["memories"] == 1
    assert await store.conversations.recent("telegram:1") == []
    assert await store.memories.count("telegram:1") == 0
    assert await store.group_context.recent("telegram:1", since=0.0, limit=10) == []
    assert await store.approval_rules.list("telegram:1") == []
    assert (await store.settings.get("telegram:1")).language is None
    assert await store.housekeeping.search("telegram:1", "secret") == []
    assert await store.memories.count("telegram:2") == 1  # the other chat is untouched
    assert len(await store.conversations.recent("telegram:2")) == 1
    assert await store.forget.forget_chat("telegram:1") == {}  # nothing left the second time


async def test_a_person_is_erased_outside_chats(store: Store) -> None:
    await fill(store, "telegram:1")
    await store.pairing.code_for("telegram", "42", "CODE2345", 2e9, 1e9)
    await store.pairing.approve("telegram", "CODE2345", 1e9)
    assert await store.forget.forget_user("telegram", "42") == {"usage": 1, "pairing": 1}
    assert not await store.pairing.is_paired("telegram", "42")
    since = datetime(2026, 1, 1, tzinfo=UTC).date()
    assert (await store.usage.totals(since, user_id="telegram:42")).requests == 0


async def test_a_members_own_part_of_a_group_goes_and_the_rest_stays(store: Store) -> None:
    chat = "telegram:-100"
    info = await store.conversations.create(chat)
    bob = Message.new("user", "[Bob] my secret", parent_id=info.root_id, author="Bob", author_id="42",
                      files=(AttachedFile("file", "text/plain", 3, "0" * 64, "uploads/plan.txt", "plan.txt"),))
    answer = Message.new("assistant", "noted", parent_id=bob.id, trace_id="t-bob")
    ann = Message.new("user", "[Ann] hello", parent_id=answer.id, author="Ann", author_id="7")
    await store.conversations.append(chat, info.id, [bob, answer, ann])
    await store.group_context.keep(chat, "o1", HeardLine(1.0, "Bob", "overheard", "42"), limit=10, since=0.0)
    await store.group_context.keep(chat, "o2", HeardLine(2.0, "Ann", "hers", "7"), limit=10, since=0.0)
    await store.usage.add([UsageRecord(date(2026, 12, 1), chat, "telegram:42", "m", UsageTotals(1, 10, 5, 0.01)),
                           UsageRecord(date(2026, 12, 1), chat, "telegram:7", "m", UsageTotals(1, 10, 5, 0.01))])
    counts, files = await store.forget.forget_author(chat, "telegram", "42")
    assert counts == {"messages": 1, "group_context": 1, "usage": 1} and files == ["uploads/plan.txt"]
    tree = await store.conversations.load(chat, info.id, "")
    assert tree is not None
    kept = {m.id: m for m in tree.messages.values()}
    assert kept[bob.id].content == ERASED and kept[bob.id].files == () and kept[bob.id].author_id is None
    assert kept[answer.id].content == "noted" and kept[ann.id].content == "[Ann] hello"  # the tree holds together
    assert kept[ann.id].author_id == "7"  # who wrote what is kept for the others' own requests
    assert [line.text for line in await store.group_context.recent(chat, since=0.0, limit=10)] == ["hers"]
    assert await store.housekeeping.search(chat, "secret") == []
    assert await store.forget.forget_author(chat, "telegram", "42") == ({}, [])
