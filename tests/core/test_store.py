"""SqliteStore: durability, chat isolation, cursor and chain queries, dedupe, and cost vs store size."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.store import SqliteStore
from bot.tree.model import Message

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    s = SqliteStore(tmp_path / "data" / "bothub.db")
    await s.open()
    yield s
    await s.close()


async def _converse(store: SqliteStore, chat: str, turns: int = 2) -> tuple[str, list[Message]]:
    info = await store.create_conversation(chat)
    msgs: list[Message] = []
    parent = info.root_id
    for i in range(turns):
        for role in ("user", "assistant"):
            msg = Message.new(role, f"{role} {i}", parent_id=parent)
            await store.append_message(chat, info.id, msg)
            msgs.append(msg)
            parent = msg.id
    return info.id, msgs


async def test_conversation_survives_close_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "bothub.db"
    first = SqliteStore(path)
    await first.open()
    conv_id, msgs = await _converse(first, "tg:1")
    call = [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]
    tool_msgs = [Message.new("assistant", "", msgs[-1].id, tool_calls=call),
                 Message.new("tool", "25C", None, tool_call_id="c1", author=None, interrupted=True)]
    await first.append_messages("tg:1", conv_id, tool_msgs)
    await first.update_chat_settings("tg:1", language="zh", model="m1")
    await first.close()

    again = SqliteStore(path)
    await again.open()
    try:
        conv = await again.load_conversation("tg:1", conv_id, "today's prompt")
        assert conv is not None
        assert conv.root.content == "today's prompt"
        chain = conv.get_message_chain()
        assert [m.id for m in chain[1:]] == [m.id for m in msgs] + [m.id for m in tool_msgs]
        assert chain[-2].tool_calls == call and chain[-1].tool_call_id == "c1" and chain[-1].interrupted
        assert chain[-1].parent_id == tool_msgs[0].id  # parent None: attached under the cursor
        assert chain[1].created_at == msgs[0].created_at
        info = await again.get_conversation("tg:1", conv_id)
        assert info is not None and info.message_count == 6 and info.title == "user 0"
        assert info.current_message_id == tool_msgs[-1].id
        assert await again.active_conversation("tg:1") == conv_id
        assert await again.chat_settings("tg:1") == {"language": "zh", "model": "m1"}
        await again.update_chat_settings("tg:1", model=None)
        assert await again.chat_settings("tg:1") == {"language": "zh"}
    finally:
        await again.close()


async def test_append_after_sigkill_is_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "bothub.db"
    script = (
        "import asyncio, os, signal, sys\n"
        "from bot.store import SqliteStore\n"
        "from bot.tree.model import Message\n"
        "async def main():\n"
        "    s = SqliteStore(sys.argv[1]); await s.open()\n"
        "    info = await s.create_conversation('dc:1')\n"
        "    await s.append_message('dc:1', info.id, Message.new('user', 'kept', info.root_id))\n"
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
        conv = await store.load_conversation("dc:1", out.decode().strip(), "p")
        assert conv is not None and [m.content for m in conv.get_message_chain()[1:]] == ["kept"]
    finally:
        await store.close()


async def test_another_chats_ids_behave_like_random_ids(store: SqliteStore) -> None:
    b_conv, b_msgs = await _converse(store, "tg:B")
    await store.create_conversation("tg:A")
    before = await store.get_conversation("tg:B", b_conv)
    for conv_id in (b_conv, "0badc0de"):
        assert await store.get_conversation("tg:A", conv_id) is None
        assert await store.find_conversations("tg:A", conv_id[:4]) == []
        assert await store.load_conversation("tg:A", conv_id, "p") is None
        assert await store.get_message("tg:A", conv_id, b_msgs[0].id) is None
        with pytest.raises(KeyError):
            await store.get_chain("tg:A", conv_id, b_msgs[-1].id)
        with pytest.raises(KeyError):
            await store.set_cursor("tg:A", conv_id, b_msgs[0].id)
        with pytest.raises(KeyError):
            await store.set_active_conversation("tg:A", conv_id)
        with pytest.raises(KeyError):
            await store.append_message("tg:A", conv_id, Message.new("user", "intruder", b_msgs[0].id))
    assert await store.get_conversation("tg:B", b_conv) == before
    assert await store.active_conversation("tg:B") == b_conv


async def test_chain_cursor_and_branching(store: SqliteStore) -> None:
    conv_id, msgs = await _converse(store, "tg:1", turns=3)
    info = await store.get_conversation("tg:1", conv_id)
    assert info is not None
    assert await store.get_chain("tg:1", conv_id, info.root_id) == []
    chain = await store.get_chain("tg:1", conv_id, msgs[3].id)
    assert [m.id for m in chain] == [m.id for m in msgs[:4]]
    await store.set_cursor("tg:1", conv_id, msgs[1].id)
    retry = Message.new("user", "again")  # parent None: under the moved cursor
    await store.append_message("tg:1", conv_id, retry)
    assert [m.id for m in await store.get_chain("tg:1", conv_id, retry.id)] == [msgs[0].id, msgs[1].id, retry.id]
    conv = await store.load_conversation("tg:1", conv_id, "p")
    assert conv is not None and [c.id for c in conv.get_children_messages(msgs[1].id)] == [msgs[2].id, retry.id]
    with pytest.raises(KeyError):
        await store.get_chain("tg:1", conv_id, "nope")
    with pytest.raises(KeyError):
        await store.set_cursor("tg:1", conv_id, "nope")


async def test_a_failed_append_writes_nothing(store: SqliteStore) -> None:
    conv_id, msgs = await _converse(store, "tg:1")
    good = Message.new("user", "fine", msgs[-1].id)
    with pytest.raises(KeyError):
        await store.append_messages("tg:1", conv_id, [good, Message.new("assistant", "x", "missing")])
    clash = Message.new("user", "clash", msgs[-1].id)
    clash.id = msgs[0].id
    with pytest.raises(ValueError, match="duplicate"):  # in a batch, later messages may point at the id
        await store.append_messages("tg:1", conv_id, [clash, Message.new("assistant", "y", clash.id)])
    with pytest.raises(ValueError, match="role"):
        await store.append_message("tg:1", conv_id, Message.new("system", "no", msgs[-1].id))
    info = await store.get_conversation("tg:1", conv_id)
    assert info is not None and info.message_count == 4 and info.current_message_id == msgs[-1].id
    assert await store.get_message("tg:1", conv_id, good.id) is None


async def test_listing_finding_and_titles(store: SqliteStore) -> None:
    first = await store.create_conversation("tg:1")
    second = await store.create_conversation("tg:1", role="coder")
    assert await store.active_conversation("tg:1") == second.id
    await store.append_message("tg:1", first.id, Message.new("user", "x" * 100 + "\nmore", first.root_id))
    listed = await store.list_conversations("tg:1")
    assert [c.id for c in listed] == [first.id, second.id]  # most recently updated first
    assert listed[0].title == "x" * 59 + "…" and listed[1].role == "coder"
    assert [c.id for c in await store.list_conversations("tg:1", limit=1, offset=1)] == [second.id]
    assert await store.count_conversations("tg:1") == 2 and await store.count_conversations("tg:2") == 0
    assert [c.id for c in await store.find_conversations("tg:1", first.id[:6].upper())] == [first.id]
    assert await store.find_conversations("tg:1", "zz' OR 1=1 --") == []
    await store.set_active_conversation("tg:1", first.id)
    assert await store.active_conversation("tg:1") == first.id


async def test_seen_dedupes_across_reopen_until_expiry(tmp_path: Path) -> None:
    now = [1000.0]
    path = tmp_path / "bothub.db"
    store = SqliteStore(path, clock=lambda: now[0])
    await store.open()
    assert await store.seen("tg:1:42", ttl=60) is False
    assert await store.seen("tg:1:42", ttl=60) is True
    await store.close()
    store = SqliteStore(path, clock=lambda: now[0])
    await store.open()
    try:
        assert await store.seen("tg:1:42", ttl=60) is True
        now[0] += 61
        assert await store.seen("tg:1:43", ttl=60) is False
        assert await store.purge_expired() == 1  # only the expired key goes
        assert await store.seen("tg:1:42", ttl=60) is False  # expired: counts as new again
        assert await store.seen("tg:1:43", ttl=60) is True
    finally:
        await store.close()


async def _fill(store: SqliteStore, total: int) -> None:
    """Background history in other chats and conversations, 100 messages each."""
    for c in range(total // 100):
        info = await store.create_conversation(f"tg:{c % 7}")
        parent, batch = info.root_id, []
        for i in range(100):
            batch.append(Message.new("user" if i % 2 == 0 else "assistant", f"m{i}", parent))
            parent = batch[-1].id
        await store.append_messages(info.chat, info.id, batch)


@pytest.mark.parametrize("stored", [100, 10_000])
async def test_appends_and_chains_stay_right_in_a_big_store(tmp_path: Path, stored: int) -> None:
    """Correctness among many other conversations; how the cost scales is measured in bench/store.py."""
    store = SqliteStore(tmp_path / "bothub.db")
    await store.open()
    try:
        await _fill(store, stored)
        info = await store.create_conversation("tg:me")
        parent, rounds = info.root_id, 200
        for i in range(rounds):
            msg = Message.new("user", f"q{i}", parent)
            await store.append_message("tg:me", info.id, msg)
            parent = msg.id
        chain = await store.get_chain("tg:me", info.id, parent)
        assert [m.content for m in chain] == [f"q{i}" for i in range(rounds)]
    finally:
        await store.close()


async def test_a_lone_message_whose_8_hex_id_is_taken_gets_another(store: SqliteStore) -> None:
    conv_id, msgs = await _converse(store, "tg:1")
    clash = Message.new("user", "same id by chance", msgs[-1].id)
    clash.id = msgs[0].id
    await store.append_message("tg:1", conv_id, clash)
    assert clash.id != msgs[0].id and len(clash.id) == 8
    info = await store.get_conversation("tg:1", conv_id)
    assert info is not None and info.current_message_id == clash.id
    stored = await store.get_message("tg:1", conv_id, clash.id)
    assert stored is not None and stored.content == "same id by chance"
