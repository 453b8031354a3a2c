"""Reply → WeCom: stream and Markdown content in WeCom's subset, and template cards for buttons.

An AI bot's stream content reads CommonMark basics (headings, bold, lists, links, code) but shows no inline
images, so an image becomes its link. Stream content is capped at 20 480 UTF-8 bytes: MAX_CHARS characters of
up to four bytes always fit. A card's texts are short, so a buttoned reply's long text goes as a stream and
its card carries the buttons under a short title.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from typing import Any

from bot.replies import FENCE, Button, Reply, split_text

MAX_BYTES = 20_480  # stream / markdown content
MAX_CHARS = MAX_BYTES // 4  # characters per message, whatever their script
CARD_TEXT = 160  # a card's sub_title_text that WeCom shows whole
CARD_TITLE = 26
MAX_BUTTONS = 6  # a button_interaction card's button_list
BUTTON_LABEL = 10
_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")


def markdown(reply: Reply) -> str:
    if reply.monospace:
        body = reply.text.replace(FENCE, "'''")
        text = f"{FENCE}\n{body}\n{FENCE}"
    else:
        text = _IMAGE.sub(lambda m: f"[{m.group(1) or m.group(2)}]({m.group(2)})", reply.text)
    return f"**{reply.title}**\n\n{text}" if reply.title else text


def fits(text: str) -> bool:
    return len(text) <= MAX_CHARS  # MAX_CHARS characters are at most MAX_BYTES bytes


def split_to_fit(reply: Reply, limit: int = MAX_CHARS) -> list[Reply]:
    """Parts whose rendering fits; the title on the first, the buttons on the last. Rendering only adds the
    title and a fence (an image's link is shorter than the image), so one split with that room suffices."""
    if len(markdown(reply)) <= limit:
        return [reply]
    room = max(64, limit - len(reply.title or "") - 2 * len(FENCE) - 16)
    texts = split_text(reply.text, room)
    return [Reply(text=part, title=reply.title if n == 0 else None,
                  buttons=reply.buttons if n == len(texts) - 1 else (), monospace=reply.monospace)
            for n, part in enumerate(texts)]


def truncate_to_fit(reply: Reply) -> Reply:
    keep, fitted = len(reply.text), reply
    while not fits(markdown(fitted)) and keep > 0:
        keep = keep * 3 // 4
        fitted = dataclasses.replace(reply, text=reply.text[:keep] + "\n…")
    return fitted


def card_holds(reply: Reply) -> bool:
    """Whether the whole reply reads well inside a card (else its text goes first, as a stream)."""
    return not reply.monospace and len(reply.text) <= CARD_TEXT and "\n\n" not in reply.text


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def card(reply: Reply, task_id: str = "", buttons: tuple[tuple[Button, ...], ...] = ()) -> dict[str, Any]:
    """A button_interaction card, each button's key its command; `buttons` stand in when the reply has none
    (a pressed card replaced by its answer keeps its buttons: WeCom's cards without buttons need a link)."""
    text = reply.text if card_holds(reply) else ""
    heading = reply.title or reply.text.strip().split("\n", 1)[0] or "…"
    body: dict[str, Any] = {"card_type": "button_interaction", "task_id": task_id or uuid.uuid4().hex,
                            "main_title": {"title": _clip(heading, CARD_TITLE)}}
    if text:
        body["sub_title_text"] = text
    body["button_list"] = [_button(b) for row in (reply.buttons or buttons) for b in row][:MAX_BUTTONS]
    return body


def _button(button: Button) -> dict[str, Any]:
    return {"text": _clip(button.label, BUTTON_LABEL), "style": 1, "key": button.action}


def overflow(reply: Reply) -> str:
    """The commands of buttons beyond what a card holds, listed to type."""
    extra = [b.action for row in reply.buttons for b in row][MAX_BUTTONS:]
    return " · ".join(f"`{a}`" for a in extra)
