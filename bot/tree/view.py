"""`/tree` rendering: each message's fixed number, branch lines, the cursor marked, within a size budget.

Numbers are given at creation and never change (a `/goto N` button in an old /tree still means the same
message); the drawing is depth first. Layout follows seed 000: a linear run is a straight column; only a
branch point indents its children (├─ └─ │), and each branch continues as a column under its first message.
Big trees are shown at the first level of detail that fits (see `_Layout.tiers`); each level keeps the root,
the cursor and the branch points on the current path. Work is linear in the tree size: a few passes, no
re-rendering per line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.tree.model import Conversation, Message

MAX_PREVIEW = 60
MAX_TARGETS = 10
MAX_INDENT = 18  # six levels; deeper branches would cost more width than the messages themselves
_SCAN = MAX_PREVIEW * 6  # previews read only this much of a (possibly huge) message


@dataclass(frozen=True, slots=True)
class TreeLabels:
    """The words of the tree, so i18n can pass another language."""

    system: str = "System"
    you: str = "You"
    ai: str = "AI"
    tool_result: str = "Tool result"
    tool_call: str = "tool call"
    here: str = "← you are here"
    hidden: str = "… {n} messages hidden"
    summary: str = "≡ summary of the {n} messages up to here"


@dataclass(frozen=True, slots=True)
class TreeView:
    text: str
    goto_targets: list[tuple[int, str]]  # (number, message id): current-path leaf first, then DFS order


def _collapse(text: str) -> str:
    line = " ".join(text[:_SCAN].split())
    return line + " …" if len(text) > _SCAN and len(line) <= MAX_PREVIEW else line


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class _Layout:
    """Display structure computed once per render: who is drawn under whom, sizes, the current path."""

    def __init__(self, conv: Conversation, labels: TreeLabels, summarized: Mapping[str, int]) -> None:
        self.conv, self.labels, kids = conv, labels, conv.children
        self.summarized = summarized  # message id → how many messages the summary stored on it covers
        self.top = [conv.root_id]
        while len(kids[self.top[-1]]) == 1:
            self.top.append(kids[self.top[-1]][0])
        self.disp: dict[str, list[str]] = {}
        stack = [self.top[-1]]
        while stack:  # each branch point shows its children; each child lists its run under itself
            node = stack.pop()
            if len(kids[node]) < 2:
                continue
            self.disp[node] = kids[node]
            for head in kids[node]:
                run, last = [], head
                while len(kids[last]) == 1:
                    last = kids[last][0]
                    run.append(last)
                if run:
                    self.disp[head] = run
                stack.append(last)
        self.parent: dict[str, str | None] = dict.fromkeys(self.top)
        self.order: list[str] = []
        stack = self.top[::-1]
        while stack:
            node = stack.pop()
            self.order.append(node)
            shown = self.disp.get(node, ())
            for child in shown:
                self.parent[child] = node
            stack.extend(reversed(shown))
        self.number = {mid: conv.messages[mid].number or 0 for mid in self.order}
        self.size = dict.fromkeys(self.order, 1)
        for node in reversed(self.order):
            up = self.parent[node]
            if up is not None:
                self.size[up] += self.size[node]
        chain = [m.id for m in conv.get_message_chain()]
        path = set(chain)
        ends = {*self.top[:2], self.top[-1]}
        for shown in self.disp.values():
            ends.update((shown[0], shown[-1]))
        self.branch_points = {mid for mid, below in kids.items() if len(below) > 1}
        self.leaves = {mid for mid, below in kids.items() if not below}
        heads = {head for bp in self.branch_points for head in kids[bp]}
        path_heads = {head for bp in self.branch_points & path for head in kids[bp]}
        skeleton = {self.top[0], *chain[-3:]} | (path & (self.branch_points | heads)) | (set(summarized) & path)
        # Levels of detail, richest first, each with the narrowest preview it may use before giving up.
        self.tiers: list[tuple[set[str] | None, int]] = [
            (None, 24),  # everything
            (path | ends | self.branch_points | heads | self.leaves, 20),
            (skeleton | (path & ends) | self.branch_points | heads | self.leaves, 16),
            (skeleton | (path & ends) | path_heads, 10),  # other branches folded under their first message
            (skeleton, 0),
        ]
        self._previews: dict[str, tuple[str, str]] = {}

    def preview(self, mid: str) -> tuple[str, str]:
        """(role label, one-line preview), cached across detail levels."""
        if mid not in self._previews:
            msg, lab = self.conv.messages[mid], self.labels
            self._previews[mid] = (_role_label(msg, lab), _collapse(_preview_text(msg, lab)))
        return self._previews[mid]

    def visible(self, keep: set[str]) -> set[str]:
        """The kept nodes plus their display ancestors (a shown node needs its parent shown)."""
        shown: set[str] = set()
        for mid in keep:
            node: str | None = mid
            while node is not None and node not in shown:
                shown.add(node)
                node = self.parent[node]
        return shown


def _role_label(msg: Message, labels: TreeLabels) -> str:
    return {"system": labels.system, "user": labels.you, "tool": labels.tool_result}.get(msg.role, labels.ai)


def _preview_text(msg: Message, labels: TreeLabels) -> str:
    if msg.job_id is not None and msg.role == "user":  # a turn a scheduled job started
        return f"⏰ {msg.content}"
    if msg.files:  # 🖼 for pictures, 📎 for any other file, before what was said
        marks = "".join("🖼" if f.kind == "image" else "📎" for f in msg.files)
        return f"{marks} {msg.content}"
    if msg.role == "assistant" and msg.tool_calls:
        names = ", ".join(str((c.get("function") or {}).get("name") or c.get("name") or "?") for c in msg.tool_calls)
        call = f"[{labels.tool_call}: {names}]"
        return f"{call} {msg.content}" if msg.content.strip() else call
    return msg.content


# One output line: (text before the preview, preview or None, text after, message id or None).
_Line = tuple[str, str | None, str, str | None]


def _lines(lay: _Layout, shown: set[str]) -> list[_Line]:
    out: list[_Line] = []
    stack: list[tuple[str | None, int, str, str]] = []

    def push(items: list[str], prefix: str, top: bool) -> None:
        entries: list[tuple[str | None, int]] = []
        hidden = 0
        for mid in items:
            if mid in shown:
                if hidden:
                    entries.append((None, hidden))
                    hidden = 0
                entries.append((mid, 0))
            else:
                hidden += lay.size[mid]
        if hidden:
            entries.append((None, hidden))
        for i in range(len(entries) - 1, -1, -1):
            last = i == len(entries) - 1
            lead = prefix if top else prefix + ("└─ " if last else "├─ ")
            under = prefix if top else prefix + ("   " if last else "│  ")
            stack.append((entries[i][0], entries[i][1], lead, under))

    push(lay.top, "", True)
    here = " " + lay.labels.here
    deferred: list[str] = []  # too deep to indent further: drawn after the rest, from the margin
    while True:
        while stack:
            mid, hidden, lead, under = stack.pop()
            if mid is None:
                out.append((lead + lay.labels.hidden.format(n=hidden), None, "", None))
                continue
            label, text = lay.preview(mid)
            marker = here if mid == lay.conv.current_message_id else ""
            if mid in lay.summarized:
                marker += " " + lay.labels.summary.format(n=lay.summarized[mid])
            out.append((f"{lead}[{lay.number[mid]}] {label}", text, marker, mid))
            if mid in lay.disp:
                if len(under) > MAX_INDENT:
                    out.append((under + "↳", None, "", None))
                    deferred.append(mid)
                else:  # a branch point's children hang from it; a run continues straight down
                    push(lay.disp[mid], under, mid not in lay.branch_points)
        if not deferred:
            return out
        mid = deferred.pop(0)
        out.append((f"↳ [{lay.number[mid]}]", None, "", None))
        push(lay.disp[mid], "", mid not in lay.branch_points)


def _length(lines: list[_Line], width: int) -> int:
    total = len(lines) - 1
    for head, text, tail, _ in lines:
        total += len(head) + len(tail) + (2 + min(len(text), width) if width and text else 0)
    return total


def _best_width(lines: list[_Line], budget: int, min_width: int) -> int | None:
    if _length(lines, min_width) > budget:
        return None
    low, high = min_width, MAX_PREVIEW
    while low < high:  # largest width that fits
        mid = (low + high + 1) // 2
        low, high = (mid, high) if _length(lines, mid) <= budget else (low, mid - 1)
    return low


def _join(lines: list[_Line], width: int) -> str:
    return "\n".join(
        head + (": " + _cut(text, width) if width and text else "") + tail for head, text, tail, _ in lines
    )


def _around_cursor(lines: list[_Line], cursor: str, budget: int) -> list[_Line]:
    """Last resort for absurd trees: the root line and a window of lines around the cursor."""
    at = next(i for i, line in enumerate(lines) if line[3] == cursor)
    low = high = at
    used = _length([lines[0], lines[at]], 0) + 4
    while True:
        grown = False
        for i in (low - 1, high + 1):
            if 0 < i < len(lines) and used + _length([lines[i]], 0) + 1 <= budget:
                used += _length([lines[i]], 0) + 1
                low, high, grown = min(low, i), max(high, i), True
        if not grown:
            break
    gap: _Line = ("…", None, "", None)
    before, after = [gap] if low > 1 else [], [gap] if high < len(lines) - 1 else []
    return [lines[0], *before, *lines[max(low, 1) : high + 1], *after]


def _targets(lay: _Layout, lines: list[_Line]) -> list[tuple[int, str]]:
    conv, leaf = lay.conv, lay.conv.current_message_id
    while conv.children[leaf]:
        leaf = conv.children[leaf][-1]
    ids = [mid for *_, mid in lines if mid is not None and (mid in lay.branch_points or mid in lay.leaves)]
    ordered = ([leaf] if leaf in ids else []) + [mid for mid in ids if mid != leaf]
    return [(lay.number[mid], mid) for mid in ordered[:MAX_TARGETS]]


def render_tree(conv: Conversation, budget: int, labels: TreeLabels | None = None,
                summarized: Mapping[str, int] | None = None) -> TreeView:
    """The richest rendering whose text fits in `budget` characters (never more); summary nodes are marked."""
    lay = _Layout(conv, labels or TreeLabels(), summarized or {})
    lines: list[_Line] = []
    for keep, min_width in lay.tiers:
        if len(keep if keep is not None else conv.messages) * 5 > budget:  # a line is at least "[n] X\n"
            continue
        lines = _lines(lay, lay.visible(keep) if keep is not None else set(conv.messages))
        width = _best_width(lines, budget, min_width)
        if width is not None:
            return TreeView(_join(lines, width), _targets(lay, lines))
    if not lines:
        lines = _lines(lay, lay.visible(lay.tiers[-1][0] or set()))
    lines = _around_cursor(lines, conv.current_message_id, budget)
    return TreeView(_join(lines, 0)[: max(budget, 0)], _targets(lay, lines))
