"""What a replay changed, as text for a chat or a terminal (and rows for the dashboard's replay page): a unified
diff of the two answers, and the two runs' tokens, cost and time side by side (from their traces); and the head
that marks a replay's answer in the tree, read back in either language."""

from __future__ import annotations

import difflib
import re
import string
from dataclasses import dataclass

from bot.i18n import STRINGS, t
from bot.store.traces import Trace

DIFF_LINES = 60  # lines of diff a chat is shown at most


@dataclass(frozen=True, slots=True)
class ReplayHead:
    number: int  # the `/goto` number of the answer replayed
    model: str
    body: str  # the replayed answer without its head


def _head_pattern(template: str) -> re.Pattern[str]:
    fields = {"n": r"(?P<n>\d+)", "model": r"(?P<model>[^\n]+?)"}
    body = "".join(re.escape(text) + (fields[name] if name else "")
                   for text, name, _, _ in string.Formatter().parse(template))
    return re.compile(body + r"(?:\n\n|$)")


HEADS = tuple(_head_pattern(template) for template in STRINGS["replay_head"])  # as /replay writes it, en and zh


def replay_head(content: str) -> ReplayHead | None:
    """A stored replay's head (bot/run/replay.py puts it before the answer, in the chat's language); None for any
    other message."""
    for pattern in HEADS:
        found = pattern.match(content)
        if found:
            return ReplayHead(int(found["n"]), found["model"], content[found.end():])
    return None


def changed_lines(old: str, new: str) -> int:
    """Lines added or removed between the two answers (0: the same answer)."""
    return sum(1 for line in difflib.ndiff(old.splitlines(), new.splitlines()) if line[:1] in "+-")


def unified(old: str, new: str, old_name: str, new_name: str) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, lineterm=""))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"… {len(lines) - DIFF_LINES} more"]
    return "\n".join(lines)


def _column(trace: Trace | None) -> list[str]:
    if trace is None:
        return ["—"] * 4
    cost = trace.cost
    return [trace.model, f"{trace.prompt_tokens} + {trace.completion_tokens}",
            "—" if cost is None else f"{cost:.4f}", f"{trace.duration_ms / 1000:.2f} s"]


def figure_rows(lang: str, original: Trace | None, replayed: Trace | None) -> list[tuple[str, str, str]]:
    """Model, tokens (prompt + completion), cost and wall time: (what, the original's, the replay's) each."""
    rows = [t(lang, key) for key in ("replay_model", "replay_tokens", "replay_cost", "replay_time")]
    return list(zip(rows, _column(original), _column(replayed), strict=True))


def figures(lang: str, original: Trace | None, replayed: Trace, names: tuple[str, str]) -> str:
    """Both runs' figures as an aligned text table, one row each."""
    rows = figure_rows(lang, original, replayed)
    width = max(len(row) for row, _, _ in rows)
    first = max(len(v) for v in [names[0], *(a for _, a, _ in rows)])
    lines = [f"{'':{width}}  {names[0]:{first}}  {names[1]}"]
    lines += [f"{row:{width}}  {a:{first}}  {b}" for row, a, b in rows]
    return "\n".join(lines)


def report(lang: str, old: str, new: str, original: Trace | None, replayed: Trace, number: int) -> str:
    """The chat's answer to /replay: whether the answer changed, the diff, the figures."""
    old_name, new_name = f"#{number}", t(lang, "replay_new")
    table = "```\n" + figures(lang, original, replayed, (old_name, new_name)) + "\n```"
    changed = changed_lines(old, new)
    if not changed:
        return f"{t(lang, 'replay_same', n=number)}\n\n{table}"
    diff = unified(old, new, old_name, new_name).replace("```", "ˋˋˋ")
    return f"{t(lang, 'replay_changed', n=number, lines=changed)}\n\n```diff\n{diff}\n```\n\n{table}"
