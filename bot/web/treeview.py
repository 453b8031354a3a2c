"""The browser's tree: each message's fixed `/goto` number, drawn as runs and forks.

A run is a chain of messages each with one child; it ends at a fork, whose children are drawn as branches
side by side under it, in the order they were made (never reordered by the cursor, so a tree looks the same
before and after a "Branch here"). Long runs show their ends (and the cursor) and fold the middle into a gap;
once a page has drawn `BUDGET` messages, further branches off the cursor's path are drawn as loaders and runs on
it keep only the fork they end in (and the cursor). Gaps and
folded branches load on demand, so a 10 000-message tree costs one pass over its skeleton and a few hundred
drawn rows. Each node also knows its branch's tip (the cursor on the cursor's path, else the newest leaf below
it): the web chat goes there when a node is clicked. Pure: no I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime

from bot.store.dashboard import NodeRow

RUN_EDGE = 2  # messages kept at each end of a folded run
RUN_LONG = 7  # runs longer than this fold their middle
BUDGET = 300  # messages drawn before further branches are folded
MAX_NEST = 40  # branch points nested before folding, even on the cursor's path


@dataclass(frozen=True, slots=True)
class Node:
    number: int
    id: str
    role: str
    preview: str
    created_at: datetime | None
    on_path: bool
    cursor: bool
    tool: bool = False
    interrupted: bool = False
    tip: int = 0  # `/goto` number of the end of this node's branch
    kind = "node"  # for the template: a drawn message, not a gap


@dataclass(frozen=True, slots=True)
class Gap:
    """Hidden middle of a run: `count` messages from `first_id` down the chain."""

    first_id: str
    count: int
    kind = "gap"


@dataclass
class Branch:
    items: list[Node | Gap]  # the run, its head first
    size: int  # messages in the head's subtree
    folded: bool = False  # drawn as a loader (its one item a Gap for the whole subtree); it loads on demand
    children: list[Branch] = field(default_factory=list)  # the fork under the run's last message, oldest first


class TreeIndex:
    """One pass over a conversation's skeleton: children, depth-first order, subtree sizes, the cursor's path."""

    def __init__(self, rows: list[NodeRow], root_id: str, cursor: str, root_preview: str = "") -> None:
        self.root_id, self.cursor, self.root_preview = root_id, cursor, root_preview
        self.rows = {r.id: r for r in rows}
        self.kids: dict[str, list[str]] = {root_id: []}
        for row in rows:
            self.kids.setdefault(row.id, [])
            self.kids.setdefault(row.parent_id, []).append(row.id)
        order: list[str] = []
        stack = [root_id]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(reversed(self.kids[node]))
        self.reachable = set(order)
        self.size = dict.fromkeys(order, 1)
        for node in reversed(order):
            for child in self.kids[node]:
                self.size[node] += self.size[child]
        self.leaf = {node: node for node in order}  # the newest leaf under each node
        for node in reversed(order):
            if self.kids[node]:
                self.leaf[node] = self.leaf[self.kids[node][-1]]
        self.path: set[str] = set()
        node_id: str | None = cursor if cursor in self.reachable else root_id
        while node_id is not None and node_id not in self.path:
            self.path.add(node_id)
            parent = self.rows.get(node_id)
            node_id = parent.parent_id if parent else None

    def __contains__(self, message_id: str) -> bool:
        return message_id in self.reachable

    def node(self, message_id: str) -> Node:
        row = self.rows.get(message_id)
        on_path, cursor = message_id in self.path, message_id == self.cursor
        tip_row = self.rows.get(self.cursor if on_path else self.leaf[message_id])
        tip = tip_row.number if tip_row else 0
        if row is None:  # the root: the system prompt, never stored
            return Node(0, message_id, "system", self.root_preview, None, on_path, cursor, tip=tip)
        return Node(row.number, row.id, row.role, row.preview, row.created_at, on_path, cursor,
                    row.has_tool_calls, row.interrupted, tip)

    def run(self, head: str) -> list[str]:
        """`head` and its descendants down to the first fork or leaf."""
        ids = [head]
        while len(kids := self.kids[ids[-1]]) == 1:
            ids.append(kids[0])
        return ids

    def tree(self) -> Branch:
        return self.branch(self.root_id, force=True)

    def branch(self, head: str, force: bool = False) -> Branch:
        """The subtree under `head`, unfolded as far as the budget allows."""
        return self._branch(head, [BUDGET], 0, force)

    def _branch(self, head: str, budget: list[int], depth: int, force: bool) -> Branch:
        on_path = head in self.path
        if not (force or on_path or (depth < MAX_NEST and budget[0] > 0)):  # drawn as a loader: no row at all
            return Branch([Gap(head, self.size[head])], self.size[head], folded=True)
        ids = self.run(head)
        items = self._fold(ids, tight=budget[0] <= 0)
        budget[0] -= sum(isinstance(i, Node) for i in items)
        children = [self._branch(c, budget, depth + 1, False) for c in self.kids[ids[-1]]]
        return Branch(items, self.size[head], children=children)

    def _fold(self, ids: list[str], tight: bool = False) -> list[Node | Gap]:
        """A run with its middle folded; `tight` (the page's budget is spent: a run on the cursor's path deep in a
        big tree) keeps only the fork at its end and the cursor."""
        if len(ids) <= (2 if tight else RUN_LONG):
            return [self.node(i) for i in ids]
        edge = 0 if tight else RUN_EDGE
        keep = set(range(edge)) | set(range(len(ids) - max(edge, 1), len(ids)))
        if self.cursor in ids:
            at = ids.index(self.cursor)
            keep |= {at - 1, at, at + 1}
        out: list[Node | Gap] = []
        hidden: list[str] = []
        for index, message_id in enumerate(ids):
            if index in keep:
                if hidden:
                    out.append(Gap(hidden[0], len(hidden)) if len(hidden) > 1 else self.node(hidden[0]))
                    hidden = []
                out.append(self.node(message_id))
            else:
                hidden.append(message_id)
        return out

    def segment(self, first_id: str, count: int) -> list[Node]:
        """A gap's messages: `count` of them down the single-child chain from `first_id`."""
        out = [self.node(first_id)]
        while len(out) < count and len(self.kids[out[-1].id]) == 1:
            out.append(self.node(self.kids[out[-1].id][0]))
        return out


Version = tuple[int, str, str]  # (message count, cursor, root preview): what an index was built from


class IndexCache:
    """The last few big trees' indexes. Messages are only ever appended, so an unchanged count (with the same
    cursor and prompt) means an unchanged tree, and unfolding a gap or branch of a 10 000-message tree skips
    both the database read and the index build. Small trees are cheap to build and are not kept."""

    def __init__(self, trees: int = 8, min_rows: int = 1000) -> None:
        self._trees, self._min_rows = trees, min_rows
        self._kept: OrderedDict[tuple[str, str], tuple[Version, TreeIndex]] = OrderedDict()

    def get(self, chat: str, conv_id: str, version: Version) -> TreeIndex | None:
        found = self._kept.get((chat, conv_id))
        if found is None or found[0] != version:
            return None
        self._kept.move_to_end((chat, conv_id))
        return found[1]

    def put(self, chat: str, conv_id: str, version: Version, index: TreeIndex) -> None:
        if len(index.rows) < self._min_rows:
            return
        self._kept[(chat, conv_id)] = (version, index)
        self._kept.move_to_end((chat, conv_id))
        while len(self._kept) > self._trees:
            self._kept.popitem(last=False)
