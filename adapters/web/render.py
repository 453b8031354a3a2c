"""Reply → the JSON the page draws: Markdown as safe HTML (raw HTML off, unsafe links dropped), buttons."""

from __future__ import annotations

from typing import Any

from markupsafe import escape

from bot.httpkit.markdown import markdown
from bot.replies import Reply


def render(reply: Reply) -> dict[str, Any]:
    html = f"<pre>{escape(reply.text)}</pre>" if reply.monospace else str(markdown(reply.text))
    return {
        "title": reply.title or "",
        "html": html,
        "buttons": [[{"label": b.label, "action": b.action} for b in row] for row in reply.buttons],
    }
