"""Reply → JSON: the Markdown text as the model wrote it, and buttons as actions (command text to send back)."""

from __future__ import annotations

from typing import Any

from bot.replies import Reply


def render(message_id: str, reply: Reply) -> dict[str, Any]:
    return {
        "id": message_id,
        "text": reply.text,
        "title": reply.title,
        "monospace": reply.monospace,
        "reasoning": reply.reasoning,  # the model's thinking (thinking mode on), apart from the answer
        "actions": [{"label": b.label, "command": b.action} for row in reply.buttons for b in row],
    }
