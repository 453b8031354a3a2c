"""/tree rendering: the seed's layout with fixed numbers, straight runs, the cursor, and the size budget."""

from __future__ import annotations

import random
import re
import time
from dataclasses import replace

import pytest

from bot.tree.model import Conversation, Message
from bot.tree.view import TreeLabels, render_tree

NUMBER = re.compile(r"^[│├└─ ]*\[(\d+)\]", re.MULTILINE)  # a message line, not a "↳ [n]" line
HIDDEN = re.compile(r"… (\d+) messages hidden")

SEED_TREE = """\
[0] System: You are a helpful assistant
[1] You: hello
[2] AI: Hi! How can I help?
├─ [3] You: weather in Beijing?
│  [4] AI: [tool call: get_weather]
│  [5] Tool result: {"temp":25}
│  [6] AI: Sunny, 25 degrees
└─ [7] You: answer again
   [8] AI: Hey there! ← you are here"""


def seed_conversation() -> Conversation:
    conv = Conversation("You are a helpful assistant")
    conv.add_message(Message.new("user", "hello"))
    first_answer = conv.add_message(Message.new("assistant", "Hi! How can I help?"))
    conv.add_message(Message.new("user", "weather in Beijing?"))
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    conv.add_message(Message.new("assistant", "", tool_calls=[call]))
    conv.add_message(Message.new("tool", '{"temp":25}', tool_call_id="c1"))
    conv.add_message(Message.new("assistant", "Sunny,\n  25 degrees"))
    conv.change_current_message(first_answer.id)
    conv.add_message(Message.new("user", "answer again"))
    conv.add_message(Message.new("assistant", "Hey there!"))
    return conv


def random_conversation(size: int, branch_rate: float, seed: int = 7) -> Conversation:
    rnd = random.Random(seed)
    conv = Conversation("You are a helpful assistant", root_id="root0000")
    ids = [conv.root_id]
    for i in range(size):
        if rnd.random() < branch_rate:
            conv.change_current_message(rnd.choice(ids))
        role = "user" if i % 2 == 0 else "assistant"
        text = f"message {i} " + "lorem ipsum " * rnd.randint(0, 12)
        # Ids by count, not uuid: 10 000 random 8-hex ids collide about once in 90 runs (the store re-draws).
        ids.append(conv.add_message(replace(Message.new(role, text), id=f"{i + 1:08x}")).id)
    return conv


def number_nodes(conv: Conversation) -> list[str]:
    """Message ids by their fixed number (index = number)."""
    return [conv.numbered[n] for n in sorted(conv.numbered)]


def accounted(conv: Conversation, text: str) -> None:
    """Every message is either shown once or counted in exactly one "hidden" line."""
    shown = [int(n) for n in NUMBER.findall(text)]
    assert len(shown) == len(set(shown))
    assert len(shown) + sum(int(n) for n in HIDDEN.findall(text)) == len(conv)


def test_seed_branching_example_renders_with_unique_numbers() -> None:
    conv = seed_conversation()
    view = render_tree(conv, 4000)
    assert view.text == SEED_TREE
    ids = number_nodes(conv)
    assert view.goto_targets == [(8, ids[8]), (2, ids[2]), (6, ids[6])]


def test_numbers_follow_creation_and_the_drawing_is_depth_first() -> None:
    conv = random_conversation(300, 0.2)
    ids = number_nodes(conv)
    assert ids == list(conv.messages) and ids[0] == conv.root_id  # number = creation order
    view = render_tree(conv, 100_000)
    drawn = [int(n) for n in NUMBER.findall(view.text)]
    assert sorted(drawn) == list(range(len(conv)))
    position = {ids[n]: i for i, n in enumerate(drawn)}
    assert all(position[conv.messages[mid].parent_id or ""] < position[mid] for mid in ids[1:])  # parents first
    accounted(conv, view.text)


def test_numbers_never_change_when_the_tree_branches() -> None:
    """Issue 12 §2: a branch used to renumber nodes, so an old /tree's `/goto 5` button led elsewhere."""
    conv = seed_conversation()
    conv.change_current_message(conv.numbered[3])
    before = render_tree(conv, 4000)
    lines_before = {line.strip("│├└─ ") for line in before.text.splitlines()}
    conv.change_current_message(conv.numbered[1])
    conv.add_message(Message.new("assistant", "a third answer"))  # a new branch early in the tree
    after = render_tree(conv, 4000)
    assert after.text.endswith("└─ [9] AI: a third answer ← you are here")
    for line in lines_before - {"[3] You: weather in Beijing? ← you are here"}:
        assert line in {x.strip("│├└─ ") for x in after.text.splitlines()}, line
    assert {n: mid for n, mid in before.goto_targets} == {n: conv.numbered[n] for n, _ in before.goto_targets}


def test_a_long_run_under_a_branch_is_a_straight_column() -> None:
    conv = seed_conversation()
    for i in range(4):
        conv.add_message(Message.new("user" if i % 2 == 0 else "assistant", f"more {i}"))
    text = render_tree(conv, 4000).text
    assert text.endswith("""└─ [7] You: answer again
   [8] AI: Hey there!
   [9] You: more 0
   [10] AI: more 1
   [11] You: more 2
   [12] AI: more 3 ← you are here""")


def test_labels_are_replaceable_for_other_languages() -> None:
    labels = TreeLabels(system="系统提示词", you="你", ai="AI", tool_result="工具结果", tool_call="工具调用",
                        here="← 当前位置", hidden="… 省略 {n} 条")
    text = render_tree(seed_conversation(), 4000, labels).text
    assert "[0] 系统提示词: You are a helpful assistant" in text
    assert "│  [4] AI: [工具调用: get_weather]" in text
    assert "[5] 工具结果:" in text and text.endswith("Hey there! ← 当前位置")


def test_long_previews_are_one_line_and_cut_with_ellipsis() -> None:
    conv = Conversation("p")
    conv.add_message(Message.new("user", "word " * 100 + "\n\nsecond paragraph"))
    line = render_tree(conv, 4000).text.splitlines()[1]
    assert line.startswith("[1] You: word word") and line.endswith("… ← you are here")
    assert len(line) < 100


def test_long_linear_run_collapses_to_first_and_last() -> None:
    conv = random_conversation(200, 0.0)
    text = render_tree(conv, 1000).text
    assert len(text) <= 1000
    assert text.splitlines()[0].startswith("[0] System")
    assert "[1] You" in text and "[200] AI" in text and text.endswith("← you are here")
    assert HIDDEN.search(text)
    accounted(conv, text)


@pytest.mark.parametrize("size", [5000, 10_000])
def test_big_tree_fits_the_budget_and_shows_the_cursor_path(size: int) -> None:
    conv = random_conversation(size, 0.02)
    started = time.perf_counter()
    view = render_tree(conv, 3500)
    elapsed = time.perf_counter() - started
    print(f"\nrender_tree({size} messages, budget 3500): {elapsed * 1000:.1f} ms, {len(view.text)} chars")
    assert len(view.text) <= 3500
    shown = {conv.numbered[int(n)] for n in NUMBER.findall(view.text)}
    path = [m.id for m in conv.get_message_chain()]
    branch_points_on_path = {mid for mid in path if len(conv.children[mid]) > 1}
    assert branch_points_on_path and branch_points_on_path <= shown
    assert conv.root_id in shown and conv.current_message_id in shown
    assert view.text.count("← you are here") == 1
    accounted(conv, view.text)
    assert 0 < len(view.goto_targets) <= 10
    assert all(mid in shown for _, mid in view.goto_targets)


@pytest.mark.parametrize("budget", [20, 60, 150, 400, 1200, 3500])
def test_text_never_exceeds_the_budget(budget: int) -> None:
    for seed, rate in enumerate((0.0, 0.05, 0.5)):
        conv = random_conversation(400, rate, seed)
        view = render_tree(conv, budget)
        assert len(view.text) <= budget
        if budget >= 150:
            assert view.text.startswith("[0] System") and "← you are here" in view.text


def test_goto_targets_put_the_current_path_leaf_first() -> None:
    conv = seed_conversation()
    ids = number_nodes(conv)
    conv.change_current_message(ids[1])  # cursor moved back: the button should lead to the newest leaf
    view = render_tree(conv, 4000)
    assert view.goto_targets[0] == (8, ids[8])
    assert "[1] You: hello ← you are here" in view.text
