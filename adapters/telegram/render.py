"""Reply → Telegram payload: the model's Markdown as HTML via markdown-it-py tokens (no regex
conversion), and buttons as an inline keyboard.

Telegram's HTML knows only a few tags (b, i, s, code, pre, a, blockquote…), so headings become bold,
lists become bullet text and tables become aligned `<pre>` blocks. Rendering also yields the visible
plain text: its UTF-16 length is what Telegram's 4096 limit counts, and it is the fallback when
Telegram rejects the markup.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token
from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.replies import Button, split_text

log = logging.getLogger("bothub.telegram")

MAX_MESSAGE = 4096  # UTF-16 code units of visible text, after entity parsing
SPLIT_AT = 4000  # first split size (Markdown characters) for replies longer than one message
_MIN_SPLIT = 64
_LINK_SCHEMES = ("http://", "https://", "tg://", "mailto:")
_INLINE_TAGS = {"strong": "b", "em": "i", "s": "s"}
MAX_CALLBACK_BYTES = 64

_md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


@dataclass(frozen=True, slots=True)
class Rendered:
    html: str
    plain: str  # exactly the text a reader sees

    @property
    def size(self) -> int:
        return utf16_len(self.plain)


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class _Writer:
    """Builds HTML and visible text side by side; block breaks are deferred so nothing trails."""

    def __init__(self) -> None:
        self.html: list[str] = []
        self.plain: list[str] = []
        self._pending = 0

    def text(self, s: str) -> None:
        if not s:
            return
        self._flush()
        self.html.append(html.escape(s, quote=False))
        self.plain.append(s)

    def open(self, tag: str) -> None:
        self._flush()
        self.html.append(tag)

    def close(self, tag: str) -> None:
        self.html.append(tag)

    def brk(self, lines: int) -> None:
        self._pending = max(self._pending, lines)

    def _flush(self) -> None:
        if self._pending and self.plain:
            self.html.append("\n" * self._pending)
            self.plain.append("\n" * self._pending)
        self._pending = 0

    def result(self) -> Rendered:
        return Rendered("".join(self.html), "".join(self.plain))


class _Renderer:
    def __init__(self) -> None:
        self.w = _Writer()
        self.lists: list[list[int]] = []  # per open list: [is_ordered, next number]
        self.quote_depth = 0
        self.links: list[bool] = []

    def render(self, tokens: list[Token]) -> Rendered:
        i = 0
        while i < len(tokens):
            if tokens[i].type == "table_open":
                i = self._table(tokens, i)
            else:
                self._block(tokens[i])
                i += 1
        return self.w.result()

    def _block(self, t: Token) -> None:
        w = self.w
        kind = t.type
        if kind == "inline":
            self._inline(t.children or [])
        elif kind == "paragraph_close":
            w.brk(1 if t.hidden else 2)
        elif kind == "heading_open":
            w.open("<b>")
        elif kind == "heading_close":
            w.close("</b>")
            w.brk(2)
        elif kind in ("bullet_list_open", "ordered_list_open"):
            start = int(t.attrGet("start") or 1) if kind == "ordered_list_open" else 0
            self.lists.append([kind == "ordered_list_open", start])
            w.brk(1)
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
            w.brk(1 if self.lists else 2)
        elif kind == "list_item_open":
            w.brk(1)
            ordered, number = self.lists[-1]
            self.lists[-1][1] += 1
            w.text("  " * (len(self.lists) - 1) + (f"{number}. " if ordered else "• "))
        elif kind == "blockquote_open":
            self.quote_depth += 1
            if self.quote_depth == 1:  # Telegram does not nest quotes
                w.open("<blockquote>")
        elif kind == "blockquote_close":
            self.quote_depth -= 1
            if self.quote_depth == 0:
                w.close("</blockquote>")
            w.brk(2)
        elif kind in ("fence", "code_block"):
            self._pre(t.content.rstrip("\n"), t.info.strip().split(" ")[0] if kind == "fence" else "")
        elif kind == "hr":
            w.text("──────────")
            w.brk(2)
        elif kind == "html_block":
            w.text(t.content.rstrip("\n"))
            w.brk(2)

    def _pre(self, code: str, lang: str) -> None:
        lang = "".join(c for c in lang if c.isalnum() or c in "+-_#")
        self.w.open(f'<pre><code class="language-{lang}">' if lang else "<pre>")
        self.w.text(code or " ")
        self.w.close("</code></pre>" if lang else "</pre>")
        self.w.brk(2)

    def _inline(self, children: list[Token]) -> None:
        w = self.w
        for c in children:
            kind = c.type
            base = kind.rsplit("_", 1)[0]
            if kind in ("text", "html_inline"):
                w.text(c.content)
            elif kind in ("softbreak", "hardbreak"):
                w.text("\n")
            elif base in _INLINE_TAGS and kind.endswith("_open"):
                w.open(f"<{_INLINE_TAGS[base]}>")
            elif base in _INLINE_TAGS and kind.endswith("_close"):
                w.close(f"</{_INLINE_TAGS[base]}>")
            elif kind == "code_inline":
                w.open("<code>")
                w.text(c.content)
                w.close("</code>")
            elif kind == "link_open":
                self.links.append(self._open_link(str(c.attrGet("href") or "")))
            elif kind == "link_close" and self.links.pop():
                w.close("</a>")
            elif kind == "image":
                src = str(c.attrGet("src") or "")
                linked = self._open_link(src)
                w.text(c.content or src)
                if linked:
                    w.close("</a>")

    def _open_link(self, href: str) -> bool:
        if not href.lower().startswith(_LINK_SCHEMES) or (self.links and self.links[-1]):
            return False
        self.w.open(f'<a href="{html.escape(href, quote=True)}">')
        return True

    def _table(self, tokens: list[Token], i: int) -> int:
        """Tables have no Telegram equivalent: draw them as aligned monospace text."""
        rows: list[list[str]] = []
        while tokens[i].type != "table_close":
            t = tokens[i]
            if t.type == "tr_open":
                rows.append([])
            elif t.type == "inline":
                rows[-1].append(_plain_inline(t.children or []))
            i += 1
        widths = [max(len(r[c]) if c < len(r) else 0 for r in rows) for c in range(max(map(len, rows)))]
        lines = [" | ".join(cell.ljust(widths[c]) for c, cell in enumerate(r)).rstrip() for r in rows]
        if len(lines) > 1:
            lines.insert(1, "-+-".join("-" * width for width in widths))
        self._pre("\n".join(lines), "")
        return i + 1


def _plain_inline(children: list[Token]) -> str:
    return "".join(c.content if c.type != "softbreak" else " " for c in children if c.content or c.type == "softbreak")


def render_markdown(text: str) -> Rendered:
    return _Renderer().render(_md.parse(text))


def render_monospace(text: str) -> Rendered:
    return Rendered(f"<pre>{html.escape(text, quote=False)}</pre>", text)


def render_parts(text: str, *, monospace: bool = False, title: str | None = None,
                 reasoning: str = "") -> list[Rendered]:
    """Render a reply as messages that each fit Telegram's limit, splitting the source, never the HTML; the
    model's thinking goes before the text as an expandable blockquote (folded until tapped)."""
    parts = _fit(text, monospace, SPLIT_AT) or ([] if reasoning else [Rendered("…", "…")])
    heads = []
    if title:
        heads.append(Rendered(f"<b>{html.escape(title, quote=False)}</b>\n", title + "\n"))
    if reasoning:
        folded = html.escape(reasoning, quote=False)
        heads.append(Rendered(f"<blockquote expandable>{folded}</blockquote>\n", reasoning + "\n"))
    for head in reversed(heads):
        first = Rendered(head.html + parts[0].html, head.plain + parts[0].plain) if parts else head
        parts[:1] = [first] if first.size <= MAX_MESSAGE else [head, parts[0]]
    return parts


def _fit(text: str, monospace: bool, chunk: int) -> list[Rendered]:
    render = render_monospace if monospace else render_markdown
    pieces = split_text(text, chunk) if len(text) > chunk else [text]
    out: list[Rendered] = []
    for piece in pieces:
        r = render(piece)
        if r.size <= MAX_MESSAGE:
            if r.plain.strip():
                out.append(r)
        elif chunk // 2 >= _MIN_SPLIT:
            out.extend(_fit(piece, monospace, chunk // 2))
        else:  # cannot happen with sane input; still never exceed the limit
            step = MAX_MESSAGE // 2
            out.extend(render_monospace(r.plain[k : k + step]) for k in range(0, len(r.plain), step))
    return out


def keyboard(rows: tuple[tuple[Button, ...], ...]) -> InlineKeyboardMarkup | None:
    """Buttons carry the command text itself as callback_data (Telegram allows 1–64 bytes)."""
    built = []
    for row in rows:
        keys = []
        for button in row:
            if not 0 < len(button.action.encode()) <= MAX_CALLBACK_BYTES:
                log.warning("button %r skipped: action must be 1-64 bytes", button.label)
                continue
            keys.append(InlineKeyboardButton(button.label or button.action, callback_data=button.action))
        if keys:
            built.append(keys)
    return InlineKeyboardMarkup(built) if built else None
