"""Reply → DingTalk: the AI card's parameters (every value a string, as cardParamMap wants) and the
Markdown dialect of its messages.

DingTalk's Markdown reads HTML tags (`<font color>`), so `<` outside code is escaped; a message (not a card)
joins single line breaks, so it gets Markdown hard breaks. Lengths are counted in characters of the rendered
text (MAX_CHARS): a long reply is split at line boundaries, an edit keeps the head and marks the cut.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from bot.replies import FENCE, Button, Reply, quoted_reasoning, split_text

MAX_CHARS = 5000  # per card or Markdown message, after rendering
CONTENT_KEY = "msgContent"  # the AI card's streamed Markdown field
INPUTING, FINISHED, FAILED = "2", "3", "5"  # the AI card's flowStatus values
ORDER = ["msgTitle", "msgContent", "msgButtons"]
_CODE = re.compile(r"(`[^`\n]*`)")
TITLE_CHARS = 40


def markdown(reply: Reply) -> str:
    """The card's Markdown: a code block for monospace, else the text (the model's thinking quoted before it:
    DingTalk cannot fold it away) with tags defused."""
    if reply.monospace:
        body = reply.text.replace(FENCE, "'''")  # an inner fence would end the block early
        return f"{FENCE}\n{body}\n{FENCE}"
    lines, fenced = [], False
    for line in quoted_reasoning(reply).split("\n"):
        if line.lstrip().startswith(FENCE):
            fenced = not fenced
            lines.append(line)
            continue
        lines.append(line if fenced else _escape_outside_code(line))
    return "\n".join(lines)


def _escape_outside_code(line: str) -> str:
    if line.count("`") % 2:
        return line.replace("<", "&lt;")
    return "".join(part if part.startswith("`") else part.replace("<", "&lt;") for part in _CODE.split(line))


def card_params(reply: Reply, status: str) -> dict[str, str]:
    """The AI Markdown card's cardParamMap; buttons ride in sys_full_json_obj (the template's own layout)."""
    extra: dict[str, Any] = {"order": ORDER}
    buttons = [_button(b) for row in reply.buttons for b in row]
    if buttons:
        extra["msgButtons"] = buttons
    params = {CONTENT_KEY: markdown(reply), "flowStatus": status, "sys_full_json_obj": dumps(extra)}
    if reply.title:
        params["msgTitle"] = reply.title
    return params


def _button(button: Button) -> dict[str, Any]:
    """A callback button: pressing it sends its id, the command text, back on the card callback topic."""
    return {"text": button.label, "color": "blue", "id": button.action, "request": True}


def message(reply: Reply) -> dict[str, str]:
    """A Markdown message (session webhook, robot OpenAPI): a title for the notification, hard line breaks;
    buttons cannot be pressed there, so their commands are listed to type."""
    text = markdown(reply)
    commands = [f"`{b.action}`" for row in reply.buttons for b in row]
    if commands:
        text += "\n\n" + " · ".join(commands)
    if reply.title:
        text = f"### {reply.title}\n{text}"
    return {"title": title(reply), "text": _hard_breaks(text)}


def _hard_breaks(text: str) -> str:
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith(FENCE):
            fenced = not fenced
        out.append(line if fenced or not line.strip() else line + "  ")
    return "\n".join(out)


def title(reply: Reply) -> str:
    """The chat list's preview."""
    words = " ".join((reply.title or reply.text).split())
    return words[:TITLE_CHARS] + ("…" if len(words) > TITLE_CHARS else "") or "…"


def split_to_fit(reply: Reply, limit: int = MAX_CHARS) -> list[Reply]:
    """Parts whose rendering fits `limit`; the title on the first, the buttons on the last."""
    if len(markdown(reply)) <= limit:
        return [reply]
    texts = split_text(reply.text, max(64, limit - 200))
    if len(texts) < 2:
        texts = split_text(reply.text, max(32, len(reply.text) // 2))
    last = len(texts) - 1
    parts = [Reply(text=text, title=reply.title if i == 0 else None, buttons=reply.buttons if i == last else (),
                   monospace=reply.monospace, reasoning=reply.reasoning if i == 0 else "")
             for i, text in enumerate(texts)]
    return [fitted for part in parts for fitted in split_to_fit(part, limit)]


def truncate_to_fit(reply: Reply, limit: int = MAX_CHARS) -> Reply:
    keep, fitted = len(reply.text), reply
    while len(markdown(fitted)) > limit and keep > 0:
        keep = keep * 3 // 4
        fitted = dataclasses.replace(reply, text=reply.text[:keep] + "\n…")
    return fitted


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
