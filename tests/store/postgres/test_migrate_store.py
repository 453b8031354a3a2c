"""`bothub migrate-store`: everything in a SQLite store arrives in PostgreSQL, and reads back the same."""

from __future__ import annotations

import asyncio
import math
import sys
from datetime import UTC, datetime
from pathlib import Path

from bot.store import Account, ChatSettings, FleetRow, NewJob, Store
from bot.store.memories import unit
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from bot.tree.model import Message
from tests.postgres import PostgresServer

REPO = Path(__file__).resolve().parents[3]
DUE = datetime(2026, 12, 24, 9, 0, tzinfo=UTC)
SINES = unit([math.sin(i) for i in range(1, 33)])


async def _run(command: list[str]) -> tuple[int | None, str, str]:
    proc = await asyncio.create_subprocess_exec(*command, cwd=REPO, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


async def _fill(store: Store) -> tuple[str, str]:
    first = await store.conversations.create("tg:1")
    question = Message.new("user", "question", first.root_id)
    await store.conversations.append("tg:1", first.id, [question, Message.new("assistant", "answer A")])
    await store.conversations.set_cursor("tg:1", first.id, question.id)
    call = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    await store.conversations.append("tg:1", first.id, [Message.new("assistant", "", tool_calls=call),
                                                        Message.new("tool", "ok", tool_call_id="c1")])
    second = await store.conversations.create("tg:1", role="coder")
    await store.conversations.set_active("tg:1", first.id)
    await store.conversations.create("dc:9")
    await store.settings.update("tg:1", language="zh", model="m1")
    await store.memories.add("tg:1", "pref", "likes tea", ["drinks", "茶"])
    await store.memories.add("tg:1", "fact", "works nights", [], SINES)
    await store.memories.search("tg:1", "tea")
    await store.pairing.code_for("telegram", "u1", "AAAA2222", 1e10, 1.0)
    await store.pairing.code_for("telegram", "u2", "BBBB3333", 1e10, 1.0)
    await store.pairing.approve("telegram", "AAAA2222", 2.0)
    await store.jobs.add(NewJob("tg:1", None, "u1", "once", "tomorrow 9:00", "Europe/Berlin", DUE, "call Li", False))
    await store.inbox.accept("tg:1:77", "tg:1", '{"text": "waiting"}')
    await store.fleet.put(FleetRow("identity", "support", '{"name": "support"}', "v1:sealed"), "cli")
    await store.accounts.put(Account("ann", "admin", ("helper", "coder")), "scrypt$hash")
    return first.id, second.id


async def _snapshot(store: Store, first: str) -> tuple[object, ...]:
    tree = await store.conversations.load("tg:1", first, "p")
    assert tree is not None
    return (
        [(m.id, m.role, m.parent_id, m.content, m.created_at, m.tool_calls, m.tool_call_id)
         for m in tree.messages.values() if m.id != tree.root_id], tree.current_message_id,
        await store.conversations.recent("tg:1"), await store.conversations.summaries(),
        await store.conversations.active("tg:1"), await store.settings.get("tg:1"),
        await store.memories.page("tg:1"), await store.jobs.for_chat("tg:1"),
        [(e.session, e.event) for e in await store.inbox.unfinished()],
        [(r.kind, r.name, r.spec, r.sealed) for r in await store.fleet.rows()],
        [(c.id, c.actor, c.name, c.credentials) for c in await store.fleet.changes()],
        [(a.name, a.role, a.agents) for a in await store.accounts.list()], await store.accounts.get("ann") is not None,
    )


async def test_migrate_store_copies_everything_and_new_rows_continue(tmp_path: Path,
                                                                      postgres: PostgresServer) -> None:
    path = tmp_path / "bothub.sqlite3"
    sqlite = SqliteStore(path)
    await sqlite.open()
    first, _ = await _fill(sqlite)
    before = await _snapshot(sqlite, first)
    await sqlite.close()
    url = await postgres.new_database()
    command = [sys.executable, "-m", "bot", "migrate-store", "--from", f"sqlite:///{path}", "--to", url]
    code, out, err = await _run(command)
    assert code == 0, err
    assert "messages              4 rows copied and counted" in out and url not in out
    code, out, err = await _run(command)
    assert code == 1 and "already has chats: migrate into an empty database" in err
    store = PostgresStore(url)
    await store.open()
    try:
        assert await _snapshot(store, first) == before
        assert await store.settings.get("tg:1") == ChatSettings(language="zh", model="m1")
        assert await store.pairing.is_paired("telegram", "u1") and not await store.pairing.is_paired("telegram", "u2")
        assert await store.pairing.approve("telegram", "BBBB3333", 3.0) == "u2"
        assert await store.inbox.seen("tg:1:77") is True
        assert [e.content for e in await store.memories.nearest("tg:1", SINES, min_similarity=0.9999)] == [
            "works nights"]  # the embedding came along, float for float
        assert await store.memories.add("tg:1", "lesson", "after the move") == 3
        job = await store.jobs.add(NewJob("tg:1", None, "u1", "once", "s", "UTC", DUE, "t", False))
        assert job.id == 2
        assert await store.fleet.put(FleetRow("agent", "helper", "{}"), "cli")
        assert await store.fleet.version() == 2  # the history continues after the copied changes
    finally:
        await store.close()
