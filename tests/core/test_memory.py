"""Per-chat memory in the real SQLite store, and /memory + /forget through the hub: one chat never sees another's."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.hub.sessions import SessionKey
from bot.store import SqliteStore
from bot.store.sqlite.memories import TOP_SQL
from bot.store.sqlite.migrations import MIGRATIONS
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app

A, B = "test:a", "test:b"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    s = SqliteStore(tmp_path / "bothub.db")
    await s.open()
    yield s
    await s.close()


async def test_a_version_1_database_gains_the_memories_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.executescript(MIGRATIONS[0] + "\nPRAGMA user_version = 1;")
        db.execute("INSERT INTO chats (key, created_at) VALUES ('test:a', '2024-01-01T00:00:00+00:00')")
    store = SqliteStore(path)
    await store.open()
    try:
        assert await store.add_memory(A, "fact", "survives the upgrade") == 1
        assert await store.chat_settings(A) == {}  # old rows untouched
    finally:
        await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 2


async def test_schema_rejects_an_unknown_type(store: SqliteStore) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        await store.add_memory(A, "opinion", "not a type")
    assert await store.count_memories(A) == 0


async def test_numbers_are_per_chat_and_list_is_oldest_first(store: SqliteStore) -> None:
    assert await store.add_memory(A, "fact", "first in a", ["x"]) == 1
    assert await store.add_memory(B, "pref", "first in b") == 1
    assert await store.add_memory(A, "lesson", "second in a") == 2
    listed = await store.list_memories(A)
    assert [(e.type, e.content, e.tags) for e in listed] == [("fact", "first in a", ("x",)),
                                                             ("lesson", "second in a", ())]
    assert [e.content for e in await store.list_memories(A, limit=1, offset=1)] == ["second in a"]
    assert (await store.count_memories(A), await store.count_memories(B)) == (2, 1)


async def test_search_is_scoped_by_chat_matches_tags_and_marks_use(store: SqliteStore) -> None:
    await store.add_memory(A, "pref", "Likes green tea", ["drinks"])
    await store.add_memory(A, "fact", "Works on the billing service")
    await store.add_memory(B, "pref", "likes tea too")
    found = await store.search_memories(A, "TEA")
    assert [e.content for e in found] == ["Likes green tea"]
    assert found[0].uses == 1 and found[0].last_used_at is not None
    assert [e.content for e in await store.search_memories(A, "drinks")] == ["Likes green tea"]
    assert [e.content for e in await store.search_memories(B, "tea")] == ["likes tea too"]
    assert await store.search_memories(A, "") == []
    assert await store.search_memories(A, "% _") == []  # LIKE wildcards are matched literally
    stored = {e.content: e.uses for e in await store.list_memories(A)}
    assert stored == {"Likes green tea": 2, "Works on the billing service": 0}


async def test_search_ranks_by_words_matched(store: SqliteStore) -> None:
    await store.add_memory(A, "fact", "deploys on fridays")
    await store.add_memory(A, "decision", "billing deploys need a review")
    found = await store.search_memories(A, "billing deploys")
    assert [e.content for e in found] == ["billing deploys need a review", "deploys on fridays"]
    assert [e.content for e in await store.search_memories(A, "deploys", limit=1)] == ["billing deploys need a review"]


async def test_top_memories_most_used_then_newest(store: SqliteStore) -> None:
    for text in ("old", "popular", "new"):
        await store.add_memory(A, "fact", text)
    await store.search_memories(A, "popular")
    await store.add_memory(B, "fact", "popular elsewhere")
    for _ in range(3):
        await store.search_memories(B, "popular")
    assert [e.content for e in await store.top_memories(A, 10)] == ["popular", "new", "old"]
    assert [e.content for e in await store.top_memories(A, 2)] == ["popular", "new"]


async def test_top_query_walks_the_index_without_sorting(store: SqliteStore, tmp_path: Path) -> None:
    """for_prompt runs every agent turn: it must read `limit` index entries, not sort the chat's memories."""
    with sqlite3.connect(tmp_path / "bothub.db") as db:
        plan = " ".join(row[-1] for row in db.execute(f"EXPLAIN QUERY PLAN {TOP_SQL}", (A, 20)))
    assert "memories_top" in plan and "TEMP B-TREE" not in plan, plan


async def test_delete_by_number_only_in_own_chat(store: SqliteStore) -> None:
    for text in ("one", "two", "three"):
        await store.add_memory(A, "fact", text)
    await store.add_memory(B, "fact", "b's only")
    assert not await store.delete_memory(B, 2)  # a's number 2 does not exist in b
    assert await store.delete_memory(A, 2)
    assert [e.content for e in await store.list_memories(A)] == ["one", "three"]
    for bad in (0, -1, 3, 10**30):
        assert not await store.delete_memory(A, bad)
    assert await store.delete_memory(B, 1)
    assert [e.content for e in await store.list_memories(A)] == ["one", "three"]


async def test_memory_and_forget_commands_stay_in_their_chat(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        chat_a = SessionKey("recording", "a").storage_key
        for i in range(12):
            await app.store.add_memory(chat_a, "pref", f"memory number {i + 1}", ["t"])
        await rec.say("/memory", chat_id="b")
        await rec.say("/forget 1", chat_id="b")
        await rec.say("/forget one", chat_id="b")
        await rec.say("/memory", chat_id="a")
        await rec.say("/memory 2", chat_id="a")
        await rec.say("/memory 9", chat_id="a")
        await rec.say("/forget 12", chat_id="a")
        await app.hub.idle()
        assert await app.store.count_memories(chat_a) == 11
    b_empty, b_missing, b_usage = rec.texts("b")
    assert b_empty == "Nothing remembered in this chat yet."
    assert b_missing == "No memory #1 in this chat — see /memory."
    assert b_usage == "Usage: /forget <N>"
    page1, page2, no_page, forgot = (reply for chat, reply in rec.sent if chat.chat_id == "a")
    assert page1.monospace and page1.title == "Memory (12)"
    assert page1.text.splitlines()[0] == " 1. [pref] memory number 1 (#t)"
    assert len(page1.text.splitlines()) == 10
    assert [b.action for row in page1.buttons for b in row] == ["/memory 2"]
    assert page2.text.splitlines() == ["11. [pref] memory number 11 (#t)", "12. [pref] memory number 12 (#t)"]
    assert page2.buttons == ()
    assert no_page.text == "There is no page 9; memory has 2 page(s)."
    assert forgot.text.startswith("Forgot memory #12.")
