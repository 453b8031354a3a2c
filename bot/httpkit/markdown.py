"""Message text to HTML for the browser: Markdown with raw HTML off, so a message can never inject markup.

markdown-it escapes every `<`, and its link check drops `javascript:`, `vbscript:`, `file:` and `data:`
targets (the link stays as plain text). Images are off: a message must not make the browser fetch
anything, and the page's CSP would block it anyway.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from markupsafe import Markup

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


def markdown(text: str) -> Markup:
    return Markup(_markdown().render(text))  # markdown-it escaped the text itself


@functools.cache
def _markdown() -> MarkdownIt:
    """Made for the first message shown, not at start-up (markdown-it is ≈ 60 modules)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "breaks": True}).disable("image")  # a chat line break stays one
