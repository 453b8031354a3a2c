"""Reply → Slack (pure): the model's Markdown as mrkdwn through markdown-it-py's tokens (no regex
conversion), and Block Kit for titles and buttons.

An answer's 👍/👎 (`Reply.feedback`) is Block Kit's feedback_buttons element in a context_actions block under
it; each button's value is the command text its press sends.

mrkdwn is not Markdown: bold is `*x*`, italic `_x_`, strike `~x~`, links `<url|label>`, no headings, lists or
tables — so headings become bold lines, lists bullet text, tables aligned code blocks. `&`, `<` and `>` are
escaped everywhere (Slack reads `<…>` as a link, a mention or `<!channel>`), code included.
"""

from __future__ import annotations

import functools
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from bot.replies import FENCE, Button, Feedback, Reply, split_text

MAX_PART = 3000  # a section block's text limit; plain messages stay under it too, so both forms fit
MAX_BUTTON_LABEL = 75
MAX_BUTTON_ROWS = 5  # actions blocks, each ≤ 25 buttons (Slack's limit)
MAX_PER_ROW = 25
_LINK_SCHEMES = ("http://", "https://", "mailto:")
_MARKS = {"strong": "*", "em": "_", "s": "~"}


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@functools.cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def mrkdwn(markdown: str) -> str:
    """Markdown → mrkdwn text."""
    out: list[str] = []
    _Blocks(out).walk(_parser().parse(markdown))
    return "".join(out).strip("\n")


class _Blocks:
    """Walks block tokens; inline content goes through `_inline`."""

    def __init__(self, out: list[str]) -> None:
        self.out = out
        self.lists: list[list[int]] = []  # a counter per open list (-1: bullets)
        self.quote = 0

    def walk(self, tokens: list[Token]) -> None:
        i = 0
        while i < len(tokens):
            i = self._token(tokens, i) + 1

    def _prefix(self) -> str:
        return "> " * self.quote

    def _token(self, tokens: list[Token], i: int) -> int:
        token = tokens[i]
        kind = token.type
        if kind == "heading_open":
            self.out.append(f"{self._prefix()}*{_inline(tokens[i + 1])}*\n\n")
            return i + 2
        if kind == "paragraph_open":
            text = _inline(tokens[i + 1])
            lead = "" if self.lists else self._prefix()
            self.out.append(lead + text.replace("\n", "\n" + lead) + ("\n" if self.lists else "\n\n"))
            return i + 2
        if kind in ("bullet_list_open", "ordered_list_open"):
            start = int(str(token.attrGet("start") or 1)) if kind == "ordered_list_open" else -1
            self.lists.append([start])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
            if not self.lists:
                self.out.append("\n")
        elif kind == "list_item_open":
            counter = self.lists[-1]
            mark = "•" if counter[0] < 0 else f"{counter[0]}."
            if counter[0] >= 0:
                counter[0] += 1
            self.out.append(self._prefix() + "    " * (len(self.lists) - 1) + mark + " ")
        elif kind in ("fence", "code_block"):
            self.out.append(_code(token.content))
        elif kind == "blockquote_open":
            self.quote += 1
        elif kind == "blockquote_close":
            self.quote -= 1
        elif kind == "hr":
            self.out.append("──────────\n\n")
        elif kind == "table_open":
            return _table(tokens, i, self.out)
        elif kind in ("html_block",):
            self.out.append(escape(token.content) + "\n")
        return i


def _code(content: str) -> str:
    body = escape(content.rstrip("\n")).replace(FENCE, "`\u200b``")  # a ``` inside must not end the block
    return f"{FENCE}\n{body}\n{FENCE}\n\n"


def _table(tokens: list[Token], i: int, out: list[str]) -> int:
    """A table as an aligned code block (mrkdwn has none); returns the index of table_close."""
    rows: list[list[str]] = []
    while tokens[i].type != "table_close":
        if tokens[i].type == "tr_open":
            rows.append([])
        elif tokens[i].type == "inline":
            rows[-1].append(_plain(tokens[i]))
        i += 1
    widths = [max(len(row[c]) for row in rows if c < len(row)) for c in range(max(map(len, rows), default=0))]
    lines = ["  ".join(cell.ljust(widths[c]) for c, cell in enumerate(row)).rstrip() for row in rows]
    if len(lines) > 1:
        lines.insert(1, "  ".join("-" * w for w in widths))
    out.append(_code("\n".join(lines)))
    return i


def _plain(token: Token) -> str:
    return "".join(child.content for child in token.children or () if child.type in ("text", "code_inline"))


def _inline(token: Token) -> str:
    out: list[str] = []
    links: list[str | None] = []
    for child in token.children or ():
        kind = child.type
        if kind == "text":
            out.append(escape(child.content))
        elif kind == "code_inline":
            out.append(f"`{escape(child.content)}`")
        elif kind in ("softbreak", "hardbreak"):
            out.append("\n")
        elif kind.endswith("_open") and kind[:-5] in _MARKS:
            out.append(_MARKS[kind[:-5]])
        elif kind.endswith("_close") and kind[:-6] in _MARKS:
            out.append(_MARKS[kind[:-6]])
        elif kind == "link_open":
            href = str(child.attrGet("href") or "")
            links.append(href if href.startswith(_LINK_SCHEMES) else None)
            out.append("\x00")  # where the label starts
        elif kind == "link_close":
            target = links.pop() if links else None
            start = len(out) - 1 - out[::-1].index("\x00")
            label = "".join(out[start + 1:])
            del out[start:]
            out.append(f"<{target.replace('|', '%7C')}|{label}>" if target else label)
        elif kind == "html_inline":
            out.append(escape(child.content))
    return "".join(out)


def render_parts(reply: Reply, limit: int = MAX_PART) -> list[str]:
    """The message texts for a reply, each within `limit`; code blocks closed and reopened across parts."""
    body = _code(reply.text) if reply.monospace else mrkdwn(reply.text)
    if reply.title:
        body = f"*{escape(reply.title)}*\n{body}"
    return split_text(body.strip("\n"), limit) or ["…"]


def blocks(text: str, buttons: tuple[tuple[Button, ...], ...],
           feedback: Feedback | None = None) -> list[dict[str, Any]] | None:
    """Block Kit for a part with buttons (a section, then a row of buttons per actions block) or feedback (its
    context_actions block last); None: neither."""
    rows = [row for row in (_buttons(r, n) for n, r in enumerate(buttons[:MAX_BUTTON_ROWS])) if row]
    actions = [{"type": "actions", "block_id": f"bothub-row-{n}", "elements": row} for n, row in enumerate(rows)]
    tail = feedback_blocks(feedback)
    if not actions and not tail:
        return None
    return [{"type": "section", "text": {"type": "mrkdwn", "text": text}}, *actions, *tail]


def feedback_blocks(feedback: Feedback | None) -> list[dict[str, Any]]:
    """The answer's 👍/👎 (a feedback_buttons element, alone in its context_actions block); [] for none."""
    if feedback is None:
        return []
    return [{"type": "context_actions", "block_id": f"bothub-feedback-{feedback.message_id}",
             "elements": [{"type": "feedback_buttons", "action_id": "bothub-feedback",
                           "positive_button": {"text": {"type": "plain_text", "text": "👍"}, "value": feedback.good},
                           "negative_button": {"text": {"type": "plain_text", "text": "👎"}, "value": feedback.bad}}]}]


def _buttons(row: tuple[Button, ...], n: int) -> list[dict[str, Any]]:
    return [{"type": "button", "action_id": f"bothub-{n}-{i}", "value": button.action,
             "text": {"type": "plain_text", "text": (button.label or button.action)[:MAX_BUTTON_LABEL]}}
            for i, button in enumerate(row[:MAX_PER_ROW]) if button.action.startswith("/")]


def stream_text(reply: Reply) -> str:
    """What a native stream shows: Slack renders a stream's `markdown_text` as Markdown itself."""
    body = f"{FENCE}\n{reply.text}\n{FENCE}" if reply.monospace else reply.text
    return f"**{reply.title}**\n{body}" if reply.title else body
