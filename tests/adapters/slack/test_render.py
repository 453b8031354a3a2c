"""Markdown → mrkdwn and Block Kit, checked against the fake Slack's own Block Kit rules."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from adapters.slack.render import blocks, mrkdwn, render_parts
from bot.replies import Button, Feedback, Reply
from tests.fakes.slack_rules import ApiError, check_blocks


def test_inline_marks_links_and_escapes() -> None:
    assert mrkdwn("**bold** _it_ ~~gone~~ `a<b>` & [x](https://e.org/?a|b) <i>") == (
        "*bold* _it_ ~gone~ `a&lt;b&gt;` &amp; <https://e.org/?a%7Cb|x> &lt;i&gt;")


def test_a_link_to_an_unsafe_scheme_keeps_only_its_label() -> None:
    assert mrkdwn("[click](javascript:alert(1))") == "[click](javascript:alert(1))"  # markdown-it refuses the link
    assert mrkdwn("[mail](mailto:a@b.org)") == "<mailto:a@b.org|mail>"


def test_headings_lists_quotes_and_code() -> None:
    text = mrkdwn("# Plan\n\n- one\n- two\n  1. deep\n\n> said **so**\n\n```py\nif a < b: pass\n```")
    assert text == ("*Plan*\n\n• one\n• two\n    1. deep\n\n> said *so*\n\n```\nif a &lt; b: pass\n```")


def test_a_table_becomes_an_aligned_code_block() -> None:
    assert mrkdwn("| name | n |\n|---|---|\n| ann | 3 |") == "```\nname  n\n----  -\nann   3\n```"


def test_a_mention_of_everyone_cannot_be_smuggled_in() -> None:
    assert "<!channel>" not in mrkdwn("hey <!channel> and <@U123>")


def test_long_text_splits_under_the_section_limit_and_monospace_stays_fenced() -> None:
    parts = render_parts(Reply("\n".join(f"row {n:05d} " + "x" * 50 for n in range(200)), monospace=True))
    assert len(parts) > 1 and all(len(p) <= 3000 for p in parts)
    assert all(p.startswith("```") and p.endswith("```") for p in parts)


def test_buttons_become_valid_block_kit_even_past_slacks_limits() -> None:
    many = tuple(tuple(Button("label " * 20, f"/goto {r * 40 + i}") for i in range(40)) for r in range(8))
    made = blocks("pick", many)
    assert made is not None
    check_blocks(made)  # the fake's rules: ≤ 25 buttons per actions block, labels ≤ 75, unique ids
    assert len(made) == 6 and made[1]["elements"][0]["value"] == "/goto 0"
    assert blocks("no buttons", ((Button("web", "https://e.org"),),)) is None  # only command text is a button


def test_feedback_is_a_feedback_buttons_element_naming_the_node_under_the_text_and_buttons() -> None:
    made = blocks("answer", ((Button("/tree", "/tree"),),), Feedback("c0nv1d00", "a1b2c3d4"))
    assert made is not None
    check_blocks(made)
    assert [b["type"] for b in made] == ["section", "actions", "context_actions"]
    [element] = made[-1]["elements"]
    assert element["type"] == "feedback_buttons"
    assert element["positive_button"]["value"] == "/feedback up c0nv1d00 a1b2c3d4"
    assert element["negative_button"]["value"] == "/feedback down c0nv1d00 a1b2c3d4"
    assert [b["type"] for b in blocks("answer", (), Feedback("c", "m")) or []] == ["section", "context_actions"]


@pytest.mark.parametrize("spoil", [
    lambda e: e.pop("negative_button"),
    lambda e: e["positive_button"].pop("value"),
    lambda e: e["positive_button"]["text"].update(type="mrkdwn"),  # plain text only
    lambda e: e["negative_button"]["text"].update(text="x" * 76),
    lambda e: e["negative_button"].update(value="/" * 2001),
    lambda e: e["positive_button"].update(accessibility_label="x" * 76),
    lambda e: e.update(style="primary"),  # no such field
    lambda e: e.update(type="button"),  # a plain button is no context action
])
def test_the_fake_refuses_a_feedback_element_slack_would_refuse(spoil: Callable[[dict[str, Any]], None]) -> None:
    good = blocks("answer", (), Feedback("c", "m"))
    assert good is not None
    bad = copy.deepcopy(good)
    spoil(bad[-1]["elements"][0])
    with pytest.raises(ApiError, match="invalid_blocks"):
        check_blocks(bad)


def test_the_fake_holds_a_context_actions_block_to_one_to_five_elements() -> None:
    good = blocks("answer", (), Feedback("c", "m"))
    assert good is not None
    element = good[-1]["elements"][0]
    for elements in ([], [{**element, "action_id": f"f{n}"} for n in range(6)]):
        with pytest.raises(ApiError, match="invalid_blocks"):
            check_blocks([good[0], {"type": "context_actions", "elements": elements}])
