"""Neutral replies (text, title, buttons, the model's thinking, answers side by side) and splitting long
Markdown without breaking code blocks."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Button:
    label: str
    action: str  # command text such as "/goto 7"; at most 64 bytes so every platform can carry it


@dataclass(frozen=True, slots=True)
class Column:
    """One of several answers a message shows side by side (a duel's contenders, where the platform can)."""

    title: str
    text: str  # Markdown
    buttons: tuple[tuple[Button, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Feedback:
    """Native 👍/👎 controls under an answer (where `Capabilities.feedback`), naming the answer's node in the tree.
    A press sends `good` or `bad`: command text, as every button does (bot/commands/feedback.py reads it)."""

    conversation_id: str
    message_id: str

    @property
    def good(self) -> str:
        return f"/feedback up {self.conversation_id} {self.message_id}"

    @property
    def bad(self) -> str:
        return f"/feedback down {self.conversation_id} {self.message_id}"


@dataclass(frozen=True, slots=True)
class Reply:
    text: str  # Markdown; adapters render natively
    title: str | None = None
    buttons: tuple[tuple[Button, ...], ...] = field(default=())
    monospace: bool = False  # keep alignment, e.g. /tree
    # the model's thinking (thinking mode): shown collapsed before the text where the platform can fold a part
    # away (an expandable quote, a spoiler, a panel, <details>), else as a quote (`quoted_reasoning`); never
    # part of `text`. Only a message's first part carries it, cut to `reasoning_room` (its end).
    reasoning: str = ""
    # answers side by side below `text`, each with its own buttons: sent only to a platform whose
    # Capabilities.columns holds them all (bot/delivery/columns.py); elsewhere each goes in a message of its own
    columns: tuple[Column, ...] = ()
    feedback: Feedback | None = None  # under the last part, like buttons


FENCE = "```"
REASONING_SHOWN = 1200  # characters of thinking a message shows at most; the run's trace keeps all of it
REASONING_MARKUP = 64  # what its folding markup may add


def reasoning_room(limit: int) -> int:
    """What a message of `limit` characters keeps free for thinking and its markup: the same whatever the
    thinking's length, so a growing stream's earlier parts never change."""
    return min(REASONING_SHOWN, limit // 3) + REASONING_MARKUP


def shown_reasoning(reasoning: str, limit: int) -> str:
    """The end of the thinking (where the model concluded), within `reasoning_room(limit)`."""
    text, keep = reasoning.strip(), reasoning_room(limit) - REASONING_MARKUP
    return text if len(text) <= keep else "…" + text[-(keep - 1):]


def quoted_reasoning(reply: Reply) -> str:
    """The text with the thinking as a Markdown quote before it: for platforms that cannot fold it away."""
    if not reply.reasoning:
        return reply.text
    quote = "\n".join("> " + line for line in reply.reasoning.split("\n"))
    return f"{quote}\n\n{reply.text}" if reply.text else quote


def stacked(reply: Reply) -> str:
    """The text with each column after it under its bold title: for a rendering that cannot place them side by side
    (a platform's plain-text fallback)."""
    sections = [reply.text] if reply.text else []
    sections += [f"**{column.title}**\n{column.text}" for column in reply.columns]
    return "\n\n".join(sections)


def split_reply(reply: Reply, limit: int) -> list[Reply]:
    """A reply as messages of at most `limit` characters: the title and thinking on the first, buttons and
    feedback on the last. Answers side by side stay one message: their maker cut them to their share
    (bot/delivery/columns.py)."""
    if reply.columns:
        return [reply]
    room = reasoning_room(limit) if reply.reasoning else 0
    texts = split_text(reply.text, limit - room) or [""]
    last = len(texts) - 1
    return [Reply(text, reply.title if i == 0 else None, reply.buttons if i == last else (), reply.monospace,
                  shown_reasoning(reply.reasoning, limit) if i == 0 and reply.reasoning else "",
                  feedback=reply.feedback if i == last else None)
            for i, text in enumerate(texts)]


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
