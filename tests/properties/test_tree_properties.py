"""Any sequence of appends, gotos and retries keeps every message's number, keeps every path a real chain to the
root, survives the JSONL export/import unchanged, and renders as a `/tree` within each platform's budget."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.api.adapter import ApiAdapter
from adapters.console.adapter import ConsoleAdapter
from adapters.discord.adapter import DiscordAdapter
from adapters.feishu.adapter import FeishuAdapter
from adapters.telegram.adapter import TelegramAdapter
from adapters.web.adapter import WebChatAdapter
from bot.tree.jsonl import export_jsonl, import_jsonl
from bot.tree.model import Conversation, Message
from bot.tree.view import render_tree

BUDGETS = sorted({a.capabilities.tree_budget for a in (ApiAdapter, ConsoleAdapter, DiscordAdapter, FeishuAdapter,
                                                       TelegramAdapter, WebChatAdapter)})
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120)
OPS = st.lists(st.one_of(st.tuples(st.just("say"), TEXT), st.tuples(st.just("goto"), st.integers(0, 60)),
                         st.tuples(st.just("retry"), TEXT)), max_size=30)


def apply(conv: Conversation, op: str, arg: object) -> None:
    cursor = conv.messages[conv.current_message_id]
    if op == "say":  # a user message and its answer under the cursor
        conv.add_message(Message.new("user", str(arg)))
        conv.add_message(Message.new("assistant", f"re: {arg}"))
    elif op == "goto":
        target = conv.by_number(int(str(arg)))
        if target is not None:
            conv.change_current_message(target.id)
    elif cursor.role == "assistant" and cursor.parent_id is not None:  # /retry: a sibling answer
        conv.add_message(Message.new("assistant", str(arg), parent_id=cursor.parent_id))


def check(conv: Conversation, numbers: dict[str, int]) -> None:
    for mid, number in numbers.items():
        assert conv.messages[mid].number == number, "a message's number changed"
    assert sorted(conv.numbered) == sorted(m.number for m in conv.messages.values())
    assert {conv.numbered[m.number] for m in conv.messages.values() if m.number is not None} == set(conv.messages)
    for leaf in conv.get_leaf_ids():
        chain = conv.get_message_chain(leaf)
        assert chain[0].id == conv.root_id and chain[-1].id == leaf
        assert all(child.parent_id == parent.id for parent, child in itertools.pairwise(chain))


@settings(max_examples=40, deadline=None)
@given(OPS)
def test_tree_operations_keep_numbers_stable_and_paths_valid(ops: list[tuple[str, object]]) -> None:
    conv = Conversation("system")
    numbers: dict[str, int] = {}
    for op, arg in ops:
        apply(conv, op, arg)
        check(conv, numbers)
        numbers = {mid: m.number for mid, m in conv.messages.items() if m.number is not None}
    again = import_jsonl(export_jsonl(conv, {}), "system")
    assert {m.id: (m.number, m.parent_id, m.content) for m in again.messages.values() if m.role != "system"} == {
        m.id: (m.number, m.parent_id, m.content) for m in conv.messages.values() if m.role != "system"}
    assert again.current_message_id == conv.current_message_id
    for budget in BUDGETS:
        view = render_tree(conv, budget)
        assert 0 < len(view.text) <= budget
