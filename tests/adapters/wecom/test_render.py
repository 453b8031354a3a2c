"""Reply → WeCom: Markdown in its subset, parts that fit WeCom's 20 480 bytes whatever the script, and template
cards whose button keys are the commands."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from adapters.wecom import render
from bot.replies import Button, Reply


def test_an_image_becomes_its_link_and_a_title_leads_in_bold() -> None:
    text = render.markdown(Reply("see ![chart](https://example.org/c.png)", title="报告"))
    assert text == "**报告**\n\nsee [chart](https://example.org/c.png)"


def test_monospace_is_one_code_block_that_an_inner_fence_cannot_end() -> None:
    assert render.markdown(Reply("a\n```\nb", monospace=True)) == "```\na\n'''\nb\n```"


@given(st.text(min_size=1, max_size=30_000), st.booleans(), st.booleans())
def test_every_part_fits_and_nothing_is_lost(text: str, titled: bool, mono: bool) -> None:
    reply = Reply(text, title="标题" if titled else None, monospace=mono,
                  buttons=((Button("Go", "/goto 1"),),))
    parts = render.split_to_fit(reply)
    assert all(len(render.markdown(p).encode()) <= render.MAX_BYTES for p in parts)
    assert all(not p.buttons for p in parts[:-1]) and parts[-1].buttons == reply.buttons
    assert "".join(p.text for p in parts).split() == text.split()


def test_a_card_carries_commands_as_keys_and_short_labels() -> None:
    card = render.card(Reply("选一个", buttons=((Button("Go to message 12", "/goto 12"),),)))
    assert card["card_type"] == "button_interaction" and card["sub_title_text"] == "选一个"
    (button,) = card["button_list"]
    assert button["key"] == "/goto 12" and len(button["text"]) <= render.BUTTON_LABEL


def test_a_pressed_card_replaced_by_its_answer_keeps_its_buttons_and_a_long_text_stays_out() -> None:
    buttons = ((Button("Go", "/goto 1"),),)
    card = render.card(Reply("moved to 1"), "task-1", buttons)
    assert (card["task_id"], card["sub_title_text"]) == ("task-1", "moved to 1")
    assert card["button_list"][0]["key"] == "/goto 1"
    assert not render.card_holds(Reply("x" * (render.CARD_TEXT + 1)))
