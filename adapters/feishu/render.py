"""Reply → Feishu card JSON 2.0 (Markdown element, header, button rows, the model's thinking in a folded
collapsible panel, answers side by side in a column_set with their buttons under each), sized in UTF-8 bytes."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from bot.replies import FENCE, Button, Column, Reply, quoted_reasoning, split_text, stacked

CARD_LIMIT_BYTES = 30_000  # Feishu rejects cards over 30 KB (code 230025); CJK is 3 bytes a character
ANSWER_ELEMENT = "answer"  # element_id CardKit updates while streaming
SUMMARY_CHARS = 60


def markdown(reply: Reply) -> str:
    """The Markdown element's content: a code block for monospace, else the text with tags defused."""
    if reply.monospace:
        body = reply.text.replace(FENCE, "'''")  # an inner fence would end the block early
        return f"{FENCE}\n{body}\n{FENCE}"
    return defuse_tags(reply.text)


def defuse_tags(text: str) -> str:
    """Escape `<` outside code so model output cannot inject <at id=all> or <font> tags into a card."""
    out: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        if line.strip().startswith(FENCE):
            in_fence = not in_fence
        if in_fence or line.strip().startswith(FENCE):
            out.append(line)
            continue
        segments = line.split("`")
        if len(segments) % 2 == 0:  # an unmatched backtick opens no code span: escape the whole line
            segments = ["`".join(segments)]
        for i in range(0, len(segments), 2):  # even segments are outside inline code spans
            segments[i] = segments[i].replace("<", "&lt;")
        out.append("`".join(segments))
    return "\n".join(out)


def card(reply: Reply, *, streaming: bool) -> dict[str, Any]:
    """A card JSON 2.0; `update_multi` so the message can be PATCHed later."""
    elements: list[dict[str, Any]] = [
        {"tag": "markdown", "content": markdown(reply), "element_id": ANSWER_ELEMENT}
    ] if reply.text or not reply.columns else []
    if reply.columns:
        elements.append({"tag": "column_set", "flex_mode": "none", "horizontal_spacing": "12px",
                         "columns": [_column(column) for column in reply.columns]})
    if reply.reasoning:  # folded until opened
        elements.insert(0, {"tag": "collapsible_panel", "expanded": False,
                            "header": {"title": {"tag": "plain_text", "content": "💭"}},
                            "elements": [{"tag": "markdown", "content": defuse_tags(reply.reasoning)}]})
    elements.extend(_button_row(row) for row in reply.buttons if row)
    config: dict[str, Any] = {"update_multi": True, "streaming_mode": streaming}
    config["summary"] = {"content": summary(reply)}
    result: dict[str, Any] = {"schema": "2.0", "config": config, "body": {"elements": elements}}
    if reply.title:
        result["header"] = {"title": {"tag": "plain_text", "content": reply.title}, "template": "blue"}
    return result


def summary(reply: Reply) -> str:
    """The chat-list preview of the card."""
    text = " ".join((reply.title or reply.text).split())
    return text[:SUMMARY_CHARS] + ("…" if len(text) > SUMMARY_CHARS else "")


def _column(column: Column) -> dict[str, Any]:
    """One answer of several side by side: its title, its Markdown and its buttons, in an equal share of the width."""
    elements: list[dict[str, Any]] = [{"tag": "markdown", "content": f"**{defuse_tags(column.title)}**"},
                                      {"tag": "markdown", "content": defuse_tags(column.text)}]
    elements.extend(_button(button) for row in column.buttons for button in row)
    return {"tag": "column", "width": "weighted", "weight": 1, "vertical_align": "top", "elements": elements}


def _button_row(row: tuple[Button, ...]) -> dict[str, Any]:
    return {
        "tag": "column_set",
        "flex_mode": "flow",
        "horizontal_spacing": "8px",
        "columns": [{"tag": "column", "width": "auto", "elements": [_button(button)]} for button in row],
    }


def _button(button: Button) -> dict[str, Any]:
    return {
        "tag": "button",
        "text": {"tag": "plain_text", "content": button.label},
        "type": "default",
        "size": "small",
        "behaviors": [{"type": "callback", "value": {"action": button.action}}],
    }


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def size(obj: Any) -> int:
    """Bytes on the wire, the way Feishu counts the card limit."""
    return len(dumps(obj).encode())


def plain_text(reply: Reply) -> str:
    """The text-message fallback when cards are refused (thinking as a quote)."""
    text = stacked(reply) if reply.columns else quoted_reasoning(reply)
    return f"{reply.title}\n{text}" if reply.title else text


def split_to_fit(reply: Reply, limit: int = CARD_LIMIT_BYTES) -> list[Reply]:
    """Split a reply so each part's card stays under `limit` bytes; title first, buttons last."""
    if size(card(reply, streaming=True)) <= limit:
        return [reply]
    if reply.columns:  # answers side by side stay in one card: each keeps its head
        return [truncate_to_fit(reply, limit)]
    overhead = size(card(dataclasses.replace(reply, text=""), streaming=True))
    # 3 bytes per character covers CJK; rarer wider characters are caught by the recursion below
    chars = max(64, (limit - overhead) // 3)
    texts = split_text(reply.text, chars)
    if len(texts) < 2:
        texts = split_text(reply.text, max(32, len(reply.text) // 2))
    last = len(texts) - 1
    parts = [
        Reply(
            text=text,
            title=reply.title if i == 0 else None,
            buttons=reply.buttons if i == last else (),
            monospace=reply.monospace,
            reasoning=reply.reasoning if i == 0 else "",
        )
        for i, text in enumerate(texts)
    ]
    return [fitted for part in parts for fitted in split_to_fit(part, limit)]


def truncate_to_fit(reply: Reply, limit: int = CARD_LIMIT_BYTES) -> Reply:
    """An edit cannot split the message, so it keeps the head of the text and marks the cut."""
    keep, fitted = max([len(reply.text)] + [len(c.text) for c in reply.columns]), reply
    while size(card(fitted, streaming=True)) > limit and keep > 0:
        keep = keep * 3 // 4
        fitted = dataclasses.replace(reply, text=_head(reply.text, keep), columns=tuple(
            dataclasses.replace(c, text=_head(c.text, keep)) for c in reply.columns))
    return fitted


def _head(text: str, keep: int) -> str:
    return text if len(text) <= keep else text[:keep] + "\n…"
