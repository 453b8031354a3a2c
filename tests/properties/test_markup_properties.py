"""Whatever Markdown a model writes, each platform's rendering is markup that platform's strict fake accepts:
Telegram HTML that parses (entities balanced, text within 4096 UTF-16 units, what a reader sees equal to the
adapter's own plain text), Discord content within 2000 characters, Feishu cards that validate, each part within
its limit."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.discord.render import DISCORD_LIMIT
from adapters.discord.render import render as discord_render
from adapters.feishu.render import CARD_LIMIT_BYTES, card, size, split_to_fit
from adapters.telegram.render import MAX_MESSAGE, render_parts
from bot.replies import Reply
from tests.fakes.feishu_cards import check_card
from tests.fakes.telegram_rules import parse_html, utf16_len

PIECES = st.sampled_from(["a", "word", " ", "\n", "\n\n", "*", "**", "_", "__", "~~", "`", "```", "```py\n", "[",
                          "](", ")", "[x](https://example.com/a_b)", "<", ">", "&", "&amp;", "#", "# ", "- ", "1. ",
                          "> ", "|", "---", "\\", "<b>", "</i>", "😀", "中文", "\u200b", "<at id=all></at>"])
MARKDOWN = st.lists(PIECES, max_size=80).map("".join)
LONG = st.tuples(MARKDOWN, st.integers(1, 120)).map(lambda t: t[0] * t[1])
COMMON = settings(max_examples=120, deadline=None)


@COMMON
@given(st.one_of(MARKDOWN, LONG), st.booleans())
def test_telegram_html_always_parses_within_the_limit(text: str, monospace: bool) -> None:
    for part in render_parts(text or "x", monospace=monospace):
        visible, _ = parse_html(part.html)  # raises like Telegram's "can't parse entities"
        assert visible == part.plain
        assert utf16_len(visible) <= MAX_MESSAGE


@COMMON
@given(st.one_of(MARKDOWN, LONG), st.booleans())
def test_discord_content_stays_within_the_limit(text: str, monospace: bool) -> None:
    parts = discord_render(Reply(text or "x", monospace=monospace))
    assert parts and all(0 < len(p) <= DISCORD_LIMIT for p in parts)


@COMMON
@given(st.one_of(MARKDOWN, LONG), st.booleans(), st.booleans())
def test_feishu_cards_validate_and_fit(text: str, monospace: bool, streaming: bool) -> None:
    for reply in split_to_fit(Reply(text or "x", monospace=monospace)):
        built = card(reply, streaming=streaming)
        assert check_card(built) is None
        assert size(built) <= CARD_LIMIT_BYTES
