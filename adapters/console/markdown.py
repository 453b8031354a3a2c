"""Markdown → terminal text (ANSI styles), parsed by markdown-it-py: headings, emphasis, code, lists, quotes, links.

The model writes Markdown; shown raw, `**` and backticks clutter the console. `NO_COLOR` (no-color.org) keeps the
layout and drops the styles."""

from __future__ import annotations

import os

from markdown_it import MarkdownIt
from markdown_it.token import Token

STYLES = {"bold": "\033[1m", "dim": "\033[2m", "italic": "\033[3m", "underline": "\033[4m", "code": "\033[36m",
          "reset": "\033[0m"}
_INLINE = {"strong_open": "bold", "em_open": "italic", "s_open": "dim"}
_PARSER = MarkdownIt("commonmark").enable("strikethrough")


def style(name: str) -> str:
    return "" if os.environ.get("NO_COLOR") else STYLES[name]


def to_terminal(text: str) -> str:
    """The text as it reads in a terminal; blocks apart by one blank line."""
    lines: list[str] = []
    lists: list[int | None] = []  # None: bullets; a number: the next item's
    quote, bullet, heading = 0, "", ""
    for token in _PARSER.parse(text):
        kind = token.type
        indent = "  " * max(0, len(lists) - 1) + "│ " * quote
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append(None if kind == "bullet_list_open" else int(str(token.attrs.get("start", 1))))
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
            _gap(lines, lists)
        elif kind == "list_item_open":
            bullet = "• " if lists[-1] is None else f"{lists[-1]}. "
            lists[-1] = None if lists[-1] is None else lists[-1] + 1
        elif kind == "blockquote_open" or kind == "blockquote_close":
            quote += 1 if kind == "blockquote_open" else -1
        elif kind == "heading_open":
            heading = style("bold") + (style("underline") if token.tag == "h1" else "")
        elif kind == "inline":
            for n, line in enumerate(_inline(token.children or []).split("\n")):
                lead = bullet if n == 0 else " " * len(bullet)
                lines.append(f"{indent}{lead}{heading}{line}{style('reset') if heading else ''}")
            bullet = heading = ""
        elif kind in ("fence", "code_block"):
            code = token.content.rstrip("\n").split("\n")
            lines += [f"{indent}  {style('code')}{line}{style('reset')}" for line in code]
            _gap(lines, lists)
        elif kind == "hr":
            lines += [indent + "─" * 40, ""]
        elif kind in ("paragraph_close", "heading_close") and not token.hidden:
            _gap(lines, lists)
    return "\n".join(lines).rstrip("\n")


def _gap(lines: list[str], lists: list[int | None]) -> None:
    """A blank line after a block, except between the items of a list."""
    if not lists and lines and lines[-1] != "":
        lines.append("")


def _inline(children: list[Token]) -> str:
    parts: list[str] = []
    links: list[str] = []
    for child in children:
        kind = child.type
        if kind == "text":
            parts.append(child.content)
        elif kind == "code_inline":
            parts.append(f"{style('code')}{child.content}{style('reset')}")
        elif kind in _INLINE:
            parts.append(style(_INLINE[kind]))
        elif kind in ("strong_close", "em_close", "s_close"):
            parts.append(style("reset"))
        elif kind in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif kind == "link_open":
            links.append(str(child.attrs.get("href", "")))
            parts.append(style("underline"))
        elif kind == "link_close":
            href = links.pop() if links else ""
            parts.append(style("reset") + (f" ({href})" if href else ""))
        elif kind == "image":
            parts.append(f"[{child.content or 'image'}]")
        elif kind in ("html_inline",):
            parts.append(child.content)
    return "".join(parts)
