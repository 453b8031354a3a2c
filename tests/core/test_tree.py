"""The pure conversation tree: cursor, branches, chains, and clear errors on bad ids."""

from __future__ import annotations

import pytest

from bot.tree.model import Conversation, Message, new_id


def _chat() -> tuple[Conversation, dict[str, Message]]:
    conv = Conversation("be brief")
    m: dict[str, Message] = {}
    m["u1"] = conv.add_message(Message.new("user", "hello"))
    m["a1"] = conv.add_message(Message.new("assistant", "hi"))
    m["u2"] = conv.add_message(Message.new("user", "weather?"))
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    m["call"] = conv.add_message(Message.new("assistant", "", tool_calls=[call]))
    m["tool"] = conv.add_message(Message.new("tool", '{"temp":25}', tool_call_id="c1"))
    conv.change_current_message(m["a1"].id)
    m["u3"] = conv.add_message(Message.new("user", "again"))
    return conv, m


def test_new_id_is_8_hex() -> None:
    ids = {new_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(len(i) == 8 and int(i, 16) >= 0 for i in ids)


def test_add_message_attaches_under_cursor_and_moves_it() -> None:
    conv, m = _chat()
    assert m["u1"].parent_id == conv.root_id
    assert m["a1"].parent_id == m["u1"].id
    assert m["u3"].parent_id == m["a1"].id
    assert conv.current_message_id == m["u3"].id
    assert [c.id for c in conv.get_children_messages(m["a1"].id)] == [m["u2"].id, m["u3"].id]


def test_chain_and_openai_messages_follow_the_cursor_branch() -> None:
    conv, m = _chat()
    assert [x.id for x in conv.get_message_chain()] == [conv.root_id, m["u1"].id, m["a1"].id, m["u3"].id]
    old = conv.get_openai_messages(m["tool"].id)
    assert old[0] == {"role": "system", "content": "be brief"}
    assert old[-2]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert old[-1] == {"role": "tool", "content": '{"temp":25}', "tool_call_id": "c1"}
    assert "tool_calls" not in old[1] and "tool_call_id" not in old[1]


def test_branch_leaves_and_is_leaf() -> None:
    conv, m = _chat()
    assert [x.id for x in conv.get_branch(m["a1"].id)] == [
        m["a1"].id, m["u2"].id, m["call"].id, m["tool"].id, m["u3"].id,
    ]
    assert set(conv.get_leaf_ids()) == {m["tool"].id, m["u3"].id}
    assert conv.is_leaf(m["u3"].id) and not conv.is_leaf(m["a1"].id)


def test_bad_ids_and_roles_raise_clear_errors() -> None:
    conv, m = _chat()
    with pytest.raises(KeyError, match="nope"):
        conv.change_current_message("nope")
    with pytest.raises(KeyError):
        conv.get_message_chain("nope")
    with pytest.raises(KeyError, match="unknown parent"):
        conv.add_message(Message.new("user", "x", parent_id="missing"))
    with pytest.raises(ValueError, match="duplicate"):
        conv.add_message(Message(m["u1"].id, "user", conv.root_id, "dup", m["u1"].created_at))
    with pytest.raises(ValueError, match="role"):
        conv.add_message(Message.new("system", "second prompt"))
    assert conv.current_message_id == m["u3"].id  # failed adds leave the cursor alone


def test_from_messages_rebuilds_children_and_injects_the_new_prompt() -> None:
    conv, _ = _chat()
    stored = [msg for mid, msg in conv.messages.items() if mid != conv.root_id]
    again = Conversation.from_messages(conv.id, conv.root_id, "new prompt", stored, conv.current_message_id)
    assert again.root.content == "new prompt"
    assert again.children == conv.children
    assert again.get_message_chain()[1:] == conv.get_message_chain()[1:]
    with pytest.raises(KeyError, match="cursor"):
        Conversation.from_messages(conv.id, conv.root_id, "p", stored, "nope")
