"""Message text to HTML for the browser: Markdown with raw HTML off, so a message can never inject markup.

markdown-it escapes every `<`, and its link check drops `javascript:`, `vbscript:`, `file:` and `data:`
targets (the link stays as plain text). Images are off: a message must not make the browser fetch
anything, and the page's CSP would block it anyway.
"""

from __future__ import annotations

from datetime import UTC, datetime

from markdown_it import MarkdownIt
from markupsafe import Markup

_md = MarkdownIt("commonmark", {"html": False}).disable("image")


def markdown(text: str) -> Markup:
    return Markup(_md.render(text))  # markdown-it escaped the text itself


ROLE_LABELS = {"system": "System", "user": "You", "assistant": "AI", "tool": "Tool result"}


def role_label(role: str) -> str:
    return ROLE_LABELS.get(role, role)


def timestamp(seconds: float) -> str:
    """A wall-clock time (seconds since the epoch) as the dashboard shows times: UTC, to the second."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")
