"""Reply → the JSON the page draws: Markdown as safe HTML (raw HTML off, unsafe links dropped; the model's
thinking folded in <details>), buttons, answers side by side (columns, each with its buttons); and the same
for a page of the conversation so far."""

from __future__ import annotations

from typing import Any

from markupsafe import escape

from bot.httpkit.markdown import markdown
from bot.messages import HistoryMessage, HistoryPage
from bot.replies import Button, Reply


def render(reply: Reply) -> dict[str, Any]:
    html = f"<pre>{escape(reply.text)}</pre>" if reply.monospace else str(markdown(reply.text))
    if reply.reasoning:  # the model's thinking, folded until opened
        html = f'<details class="thinking"><summary>💭</summary>{markdown(reply.reasoning)}</details>{html}'
    return {
        "title": reply.title or "",
        "html": html,
        "buttons": _buttons(reply.buttons),
        "columns": [{"title": c.title, "html": str(markdown(c.text)), "buttons": _buttons(c.buttons)}
                    for c in reply.columns],
    }


def _buttons(rows: tuple[tuple[Button, ...], ...]) -> list[list[dict[str, str]]]:
    return [[{"label": b.label, "action": b.action} for b in row] for row in rows]


def history_entry(message: HistoryMessage) -> dict[str, Any]:
    """A stored message: its number for `/goto`, its time, and the run that wrote it (for "show trace")."""
    return {"id": message.id, "number": message.number, "role": message.role, "html": str(markdown(message.text)),
            "text": message.text, "at": message.created_at.isoformat(), "trace": message.trace_id or "",
            "tools": list(message.tools), "interrupted": message.interrupted}


def history_page(page: HistoryPage) -> dict[str, Any]:
    return {"conversation": page.conversation_id or "", "title": page.title, "more": page.more,
            "messages": [history_entry(m) for m in page.messages]}
