"""What a replay changed, as text for a chat or a terminal: a unified diff of the two answers, and the two runs'
tokens, cost and time side by side (from their traces)."""

from __future__ import annotations

import difflib

from bot.i18n import t
from bot.store.traces import Trace

DIFF_LINES = 60  # lines of diff a chat is shown at most


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


def figures(lang: str, original: Trace | None, replayed: Trace, names: tuple[str, str]) -> str:
    """Model, tokens (prompt + completion), cost and wall time of both runs, one row each."""
    rows = [t(lang, key) for key in ("replay_model", "replay_tokens", "replay_cost", "replay_time")]
    left, right = _column(original), _column(replayed)
    width = max(len(r) for r in rows)
    first = max(len(v) for v in [names[0], *left])
    lines = [f"{'':{width}}  {names[0]:{first}}  {names[1]}"]
    lines += [f"{row:{width}}  {a:{first}}  {b}" for row, a, b in zip(rows, left, right, strict=True)]
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
