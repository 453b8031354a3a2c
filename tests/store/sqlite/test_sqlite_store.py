"""What only the SQLite backend promises: a commit survives SIGKILL, old files migrate, the hot query's plan."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.store import ChatSettings
from bot.store.sqlite import SqliteStore
from bot.store.sqlite.memories import TOP_SQL
from bot.store.sqlite.migrations import MIGRATIONS
from bot.tree.model import Message

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    s = SqliteStore(tmp_path / "bothub.db")
    await s.open()
    yield s
    await s.close()


async def test_append_after_sigkill_is_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "bothub.db"
    script = (
        "import asyncio, os, signal, sys\n"
        "from bot.store.sqlite import SqliteStore\n"
        "from bot.tree.model import Message\n"
        "async def main():\n"
        "    s = SqliteStore(sys.argv[1]); await s.open()\n"
        "    info = await s.conversations.create('dc:1')\n"
        "    await s.conversations.append('dc:1', info.id, [Message.new('user', 'kept', info.root_id)])\n"
        "    print(info.id, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "asyncio.run(main())\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, str(path), cwd=REPO, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    store = SqliteStore(path)
    await store.open()
    try:
        conv = await store.conversations.load("dc:1", out.decode().strip(), "p")
        assert conv is not None and [m.content for m in conv.get_message_chain()[1:]] == ["kept"]
    finally:
        await store.close()


def _version_1(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0] + "\nPRAGMA user_version = 1;")
    return db


async def test_a_version_1_database_gains_the_later_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with _version_1(path) as db:
        db.execute("INSERT INTO chats (key, settings, created_at) VALUES "
                   "('test:a', '{\"language\": \"zh\", \"future\": 1}', '2024-01-01T00:00:00+00:00')")
    store = SqliteStore(path)
    await store.open()
    try:
        assert await store.memories.add("test:a", "fact", "survives the upgrade") == 1
        assert await store.settings.get("test:a") == ChatSettings(language="zh")  # old rows untouched
        assert await store.settings.update("test:a", model="m") == ChatSettings(language="zh", model="m")
    finally:
        await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 4
        stored = json.loads(db.execute("SELECT settings FROM chats WHERE key = 'test:a'").fetchone()[0])
        assert stored == {"language": "zh", "future": 1, "model": "m"}  # a newer version's key is kept


async def test_pairing_moves_out_of_the_fake_chat_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    far, gone = 4_000_000_000.0, 1.0
    state = {"approved": ["u1", "u2"], "pending": {"AAAA2222": {"user_id": "u3", "expires": far},
                                                   "BBBB3333": {"user_id": "u4", "expires": gone}}}
    with _version_1(path) as db:
        db.execute("INSERT INTO chats (key, settings, created_at) VALUES (?, ?, ?)",
                   ("_pairing:telegram", json.dumps(state), "2024-01-01T00:00:00+00:00"))
        db.execute("INSERT INTO chats (key, settings, created_at) VALUES (?, ?, ?)",
                   ("telegram:9", '{"model": "m"}', "2024-01-01T00:00:00+00:00"))
    store = SqliteStore(path)
    await store.open()
    try:
        assert [await store.pairing.is_paired("telegram", u) for u in ("u1", "u2", "u3", "u4")] == [
            True, True, False, False]
        assert not await store.pairing.is_paired("discord", "u1")
        assert await store.pairing.approve("telegram", "BBBB3333", 1_000_000.0) is None  # it had expired
        assert await store.pairing.approve("telegram", "AAAA2222", 1_000_000.0) == "u3"
        assert await store.settings.get("telegram:9") == ChatSettings(model="m")
    finally:
        await store.close()
    with sqlite3.connect(path) as db:
        assert [r[0] for r in db.execute("SELECT key FROM chats")] == ["telegram:9"]


async def test_schema_rejects_an_unknown_memory_type(store: SqliteStore) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        await store.memories.add("test:a", "opinion", "not a type")
    assert await store.memories.count("test:a") == 0


async def test_memories_are_ranked_by_the_real_sqlite_vec(store: SqliteStore) -> None:
    """This Python has no enable_load_extension: the extension goes in through SQLite's C API."""
    assert (await store.memories.engine()).startswith("v0.")


async def test_top_query_walks_the_index_without_sorting(store: SqliteStore, tmp_path: Path) -> None:
    """Memories for the prompt are read every agent turn: `limit` index entries, not a sort of the chat's."""
    with sqlite3.connect(tmp_path / "bothub.db") as db:
        plan = " ".join(row[-1] for row in db.execute(f"EXPLAIN QUERY PLAN {TOP_SQL}", ("test:a", 20)))
    assert "memories_top" in plan and "TEMP B-TREE" not in plan, plan


async def test_existing_trees_are_numbered_as_tree_showed_them(tmp_path: Path) -> None:
    """Migration 5: old trees keep their depth-first /tree numbers; new messages continue after them."""
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript("".join(m + ";\n" for m in MIGRATIONS[:3]) + "PRAGMA user_version = 3;")  # type: ignore[operator]
    now = "2024-01-01T00:00:00+00:00"
    db.execute("INSERT INTO conversations (id, chat, root_id, role, current_message_id, created_at, updated_at, "
               "message_count) VALUES ('c1', 'tg:1', 'r', 'default', 'm5', ?, ?, 5)", (now, now))
    # inserted m1 m2 m4 m3 m5; m2 and m4 both hang from m1, so depth first is m1 m2 m3 m4 m5
    for mid, parent in [("m1", "r"), ("m2", "m1"), ("m4", "m1"), ("m3", "m2"), ("m5", "m4")]:
        db.execute("INSERT INTO messages (id, conversation_id, chat, parent_id, role, content, created_at) "
                   "VALUES (?, 'c1', 'tg:1', ?, 'user', ?, ?)", (mid, parent, mid, now))
    db.commit()
    db.close()
    store = SqliteStore(path)
    await store.open()
    try:
        conv = await store.conversations.load("tg:1", "c1", "p")
        assert conv is not None
        assert {n: conv.messages[mid].content for n, mid in conv.numbered.items() if n} == {
            1: "m1", 2: "m2", 3: "m3", 4: "m4", 5: "m5"}  # depth first, not the insertion order m1 m2 m4 m3 m5
        new = Message.new("assistant", "after", parent_id="m5")
        await store.conversations.append("tg:1", "c1", [new])
        assert new.number == 6
    finally:
        await store.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
