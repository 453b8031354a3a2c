"""Seed 000 JSONL: exact export shape, lossless round trip (also through the store), clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.store.sqlite import SqliteStore
from bot.tree.jsonl import export_jsonl, import_jsonl
from bot.tree.model import Conversation, Message
from tests.core.test_treeview import seed_conversation


def _same_tree(a: Conversation, b: Conversation) -> None:
    assert a.root_id == b.root_id and a.current_message_id == b.current_message_id
    assert a.children == b.children
    assert [m for k, m in a.messages.items() if k != a.root_id] == [m for k, m in b.messages.items() if k != b.root_id]


def test_export_matches_the_seed_format() -> None:
    conv = seed_conversation()
    lines = export_jsonl(conv, {"title": "hello"}).splitlines()
    header = json.loads(lines[0])
    assert header == {"type": "header", "root_id": conv.root_id, "metadata": {
        "title": "hello", "conversation_id": conv.id, "current_message_id": conv.current_message_id}}
    assert len(lines) == len(conv)  # the system prompt is not written
    first = json.loads(lines[1])
    seed_fields = ["type", "msg_id", "role", "content", "parent_id", "timestamp", "tool_call_id", "tool_calls"]
    assert list(first) == [*seed_fields, "number"]  # the seed's fields, then the /tree number
    assert first["role"] == "user" and first["parent_id"] == conv.root_id and first["timestamp"].endswith("Z")
    assert json.loads(lines[4])["tool_calls"][0]["function"]["name"] == "get_weather"


def test_round_trip_keeps_messages_structure_and_cursor() -> None:
    conv = seed_conversation()
    conv.add_message(Message.new("user", "群里的问题", author="Alice", interrupted=True))
    back = import_jsonl(export_jsonl(conv, {}), "fresh prompt")
    assert back.id == conv.id and back.root.content == "fresh prompt"
    _same_tree(conv, back)
    assert {m.id: m.number for m in back.messages.values()} == {m.id: m.number for m in conv.messages.values()}


def test_seed_sample_lines_import() -> None:
    text = (
        '{"type":"header","root_id":"009f13ac","metadata":{}}\n'
        '{"type":"message","msg_id":"82981a45","role":"user","content":"你好","parent_id":"009f13ac",'
        '"timestamp":"2026-07-24T12:35:55Z","tool_call_id":null,"tool_calls":null}\n'
        '{"type":"message","msg_id":"b06c61f6","role":"assistant","content":"你好！","parent_id":"82981a45",'
        '"timestamp":"2026-07-24T12:35:59Z","tool_call_id":null,"tool_calls":null}\n'
    )
    conv = import_jsonl(text, "p")
    assert [m.content for m in conv.get_message_chain()] == ["p", "你好", "你好！"]
    assert conv.messages["82981a45"].created_at.isoformat() == "2026-07-24T12:35:55+00:00"


@pytest.mark.parametrize(("text", "error"), [
    ("", "no header"),
    ('{"type":"message"}\n', "line 1: the first line must be the header"),
    ('{"type":"header","root_id":"r"}\nnot json\n', "line 2: not valid JSON"),
    ('{"type":"header","root_id":"r"}\n[1]\n', "line 2: expected a JSON object"),
    ('{"type":"header","root_id":"r"}\n\n{"type":"message","msg_id":"a","role":"user","content":"x",'
     '"parent_id":"ghost"}\n', "line 3: .*unknown parent"),
    ('{"type":"header","root_id":"r"}\n{"type":"message","msg_id":"a","role":"system","content":"x",'
     '"parent_id":"r"}\n', "line 2: role"),
    ('{"type":"header","root_id":"r"}\n{"type":"message","msg_id":"a","role":"user","content":5,'
     '"parent_id":"r"}\n', "line 2: field 'content'"),
    ('{"type":"header","root_id":"r"}\n{"type":"message","msg_id":"a","role":"user","content":"x",'
     '"parent_id":"r","timestamp":"yesterday"}\n', "line 2: bad timestamp"),
    ('{"type":"header","root_id":"r"}\n{"type":"message","msg_id":"a","role":"user","content":"x",'
     '"parent_id":"r"}\n{"type":"message","msg_id":"a","role":"user","content":"y","parent_id":"r"}\n',
     "line 3: duplicate"),
    ('{"type":"header","root_id":"r"}\n{"type":"other"}\n', "line 2: unknown line type"),
])
def test_bad_input_names_the_line(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        import_jsonl(text, "p")


async def test_import_through_the_store_into_another_chat(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "bothub.db")
    await store.open()
    try:
        original = seed_conversation()
        text = export_jsonl(original, {})
        first = await store.conversations.import_tree("tg:B", import_jsonl(text, "p"))
        assert first.message_count == len(original) - 1 and first.title == "hello"
        second = await store.conversations.import_tree("tg:B", import_jsonl(text, "p"))  # id taken: a fresh one
        assert second.id != first.id and len(second.id) == 8
        assert await store.conversations.active("tg:B") is None  # importing does not switch
        for info in (first, second):
            loaded = await store.conversations.load("tg:B", info.id, "p")
            assert loaded is not None
            _same_tree(original, loaded)
        assert export_jsonl(loaded, {}).splitlines()[1:] == text.splitlines()[1:]
    finally:
        await store.close()
