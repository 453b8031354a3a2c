"""Reply → terminal text: the title as a header line, thinking as a quote, buttons as `[label: command]`."""

from __future__ import annotations

from bot.replies import Reply, quoted_reasoning


def render(reply: Reply, *, prompt: str = "") -> str:
    head = prompt + (f"== {reply.title} ==\n" if reply.title else "")
    buttons = "".join("\n  " + "   ".join(f"[{b.label}: {b.action}]" for b in row) for row in reply.buttons)
    return f"{head}{quoted_reasoning(reply)}{buttons}"
