"""Markdown → Telegram HTML: every construct, escaping, and splitting that never breaks a tag."""

from __future__ import annotations

import pytest

from adapters.telegram.render import MAX_MESSAGE, render_markdown, render_parts
from tests.fakes.telegram_rules import parse_html


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("**b** *i* ~~s~~", "<b>b</b> <i>i</i> <s>s</s>"),
        ("a & b < c > d", "a &amp; b &lt; c &gt; d"),
        ("`x <y>`", "<code>x &lt;y&gt;</code>"),
        ("```js\nlet a = 1 < 2;\n```", '<pre><code class="language-js">let a = 1 &lt; 2;</code></pre>'),
        ("    indented()", "<pre>indented()</pre>"),
        ("[site](https://e.com/?q=1&r=\"2\")", '<a href="https://e.com/?q=1&amp;r=%222%22">site</a>'),
        ("[relative](docs/x.md)", "relative"),
        ("# Title", "<b>Title</b>"),
        ("- one\n- two\n  1. sub", "• one\n• two\n  1. sub"),
        ("3. three\n4. four", "3. three\n4. four"),
        ("> quoted **bold**\n> > nested", "<blockquote>quoted <b>bold</b>\n\nnested</blockquote>"),
        ("|a|bb|\n|-|-|\n|1|2|", "<pre>a | bb\n--+---\n1 | 2</pre>"),
        ("<b>raw html</b>", "&lt;b&gt;raw html&lt;/b&gt;"),
        ("para one\n\npara two", "para one\n\npara two"),
    ],
)
def test_constructs(markdown: str, html: str) -> None:
    rendered = render_markdown(markdown)
    assert rendered.html == html
    assert parse_html(rendered.html)[0] == rendered.plain


def test_plain_text_is_what_the_reader_sees() -> None:
    rendered = render_markdown("**Bold** and [a link](https://e.com) & `code`")
    assert rendered.plain == "Bold and a link & code"


def test_emoji_count_double_toward_the_limit() -> None:
    parts = render_parts("😀" * 3000)
    assert len(parts) == 2
    assert all(part.size <= MAX_MESSAGE for part in parts)
    assert "".join(p.plain for p in parts) == "😀" * 3000


def test_wide_table_is_split_until_it_fits() -> None:
    table = "|" + "|".join(f"c{i}" for i in range(3)) + "|\n|-|-|-|\n" + "".join(
        f"|{'x' * 5}|{'y' * 300}|z|\n" for _ in range(30)
    )
    parts = render_parts(table)
    assert len(parts) > 1 and all(part.size <= MAX_MESSAGE for part in parts)
    for part in parts:
        parse_html(part.html)


def test_title_and_empty_text() -> None:
    assert [p.html for p in render_parts("body", title="A & B")] == ["<b>A &amp; B</b>\nbody"]
    assert [p.plain for p in render_parts("   ")] == ["…"]
