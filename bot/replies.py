"""Neutral replies (text, title, buttons) and splitting long Markdown without breaking code blocks."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Button:
    label: str
    action: str  # command text such as "/goto 7"; at most 64 bytes so every platform can carry it


@dataclass(frozen=True, slots=True)
class Reply:
    text: str  # Markdown; adapters render natively
    title: str | None = None
    buttons: tuple[tuple[Button, ...], ...] = field(default=())
    monospace: bool = False  # keep alignment, e.g. /tree


FENCE = "```"


def split_text(text: str, limit: int) -> list[str]:
    """Split Markdown into parts of at most `limit` characters.

    Prefers paragraph, then line, then word boundaries; a fenced code block cut in two is closed
    at the end of one part and reopened (with its language) at the start of the next.
    """
    if limit < 32:
        raise ValueError("limit too small to split safely")
    parts: list[str] = []
    rest = text
    reopen = ""
    while rest:
        budget = limit - len(reopen)
        if len(rest) <= budget:
            parts.append(reopen + rest)
            break
        # leave room for a closing fence if we end inside a code block
        cut = _cut_point(rest, budget - len(FENCE) - 1)
        chunk, rest = rest[:cut], rest[cut:]
        body = reopen + chunk
        fence_lang = _open_fence(body)
        if fence_lang is not None:
            body = body.rstrip("\n") + "\n" + FENCE
            reopen = FENCE + fence_lang + "\n"
        else:
            reopen = ""
        parts.append(body.rstrip() if fence_lang is None else body)
        rest = rest.lstrip("\n") if fence_lang is None else rest
    return [p for p in parts if p.strip()]


def _cut_point(text: str, budget: int) -> int:
    for sep in ("\n\n", "\n", " "):
        at = text.rfind(sep, budget // 2, budget)
        if at > 0:
            return at + len(sep)
    return budget


def _open_fence(text: str) -> str | None:
    """Language of a code fence left open at the end of `text`, or None if all are closed."""
    lang: str | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(FENCE):
            lang = stripped[len(FENCE):].strip() if lang is None else None
    return lang
