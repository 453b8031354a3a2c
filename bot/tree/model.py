"""The conversation tree of seed 000: messages linked by parent id, a cursor, branches. Pure, no I/O."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

ROLES = frozenset({"user", "system", "assistant", "tool"})


def new_id() -> str:
    """8 hex chars: short enough to type in `/switch`, random enough to be unguessable per chat."""
    return uuid.uuid4().hex[:8]


def utc_now() -> datetime:
    return datetime.now(UTC)


UPLOADS = "uploads"  # the folder of a chat's folder where bot/media/intake.py keeps what users send


@dataclass(frozen=True, slots=True)
class AttachedFile:
    """A file that came with a message, as kept in the chat's folder (`path` is relative to it)."""

    kind: str  # "image" | "file" | "audio" | "video"
    mime: str
    size: int
    sha256: str
    path: str
    name: str  # what the sender called it

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "mime": self.mime, "size": self.size, "sha256": self.sha256,
                "path": self.path, "name": self.name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AttachedFile:
        return cls(str(data["kind"]), str(data["mime"]), int(data["size"]), str(data["sha256"]),
                   str(data["path"]), str(data.get("name", "")))


def files_to_json(files: tuple[AttachedFile, ...]) -> str | None:
    """How a message's files are stored (a JSON list), None when there are none."""
    return json.dumps([f.to_json() for f in files], ensure_ascii=False) if files else None


def files_from_json(text: str | None) -> tuple[AttachedFile, ...]:
    return tuple(AttachedFile.from_json(item) for item in json.loads(text)) if text else ()


@dataclass(slots=True)
class Message:
    id: str
    role: str  # "user" | "system" | "assistant" | "tool"
    parent_id: str | None  # None only for the root (system prompt)
    content: str
    created_at: datetime  # aware, UTC
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    author: str | None = None  # sender display name in groups (content already carries it)
    interrupted: bool = False  # a partial answer cut short by /stop
    job_id: str | None = None  # set on the turn a scheduled job started (bot/scheduler)
    number: int | None = None  # `/goto N`: given once, in creation order, per conversation; the root is 0
    files: tuple[AttachedFile, ...] = ()  # what came with a user message (bot/media)
    trace_id: str | None = None  # the agent run that produced an assistant or tool message (bot/store/traces.py)
    author_id: str | None = None  # the sender's id on its platform, in groups: what a member's /forget_me erases

    @classmethod
    def new(cls, role: str, content: str, parent_id: str | None = None, **fields: Any) -> Message:
        """A fresh message with a new id and the current time; parent None means "under the cursor"."""
        return cls(new_id(), role, parent_id, content, utc_now(), **fields)

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = self.tool_calls
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


class Conversation:
    """All messages of one conversation; `children` keeps creation order, so branch order is stable."""

    def __init__(self, system_prompt: str, id: str | None = None, root_id: str | None = None) -> None:
        self.id = id or new_id()
        root = Message(root_id or new_id(), "system", None, system_prompt, utc_now(), number=0)
        self.root_id = root.id
        self.messages: dict[str, Message] = {root.id: root}
        self.children: dict[str, list[str]] = {root.id: []}
        self.numbered: dict[int, str] = {0: root.id}  # number → message id
        self._last_number = 0
        self.current_message_id = root.id

    @classmethod
    def from_messages(
        cls,
        id: str,
        root_id: str,
        system_prompt: str,
        messages: Iterable[Message],
        current: str | None = None,
    ) -> Conversation:
        """Rebuild from stored messages (creation order, root excluded); the prompt is injected fresh."""
        conv = cls(system_prompt, id=id, root_id=root_id)
        for msg in messages:
            conv._attach(msg)
        conv.current_message_id = current if current is not None else conv.current_message_id
        if conv.current_message_id not in conv.messages:
            raise KeyError(f"cursor {conv.current_message_id!r} is not a message of conversation {id}")
        return conv

    def _attach(self, msg: Message) -> None:
        if msg.role not in ROLES or msg.role == "system":
            raise ValueError(f"message {msg.id!r}: role must be user, assistant or tool, not {msg.role!r}")
        if msg.id in self.messages:
            raise ValueError(f"duplicate message id {msg.id!r}")
        if msg.parent_id not in self.messages:
            raise KeyError(f"message {msg.id!r}: unknown parent {msg.parent_id!r}")
        if msg.number is None:  # a new message: the next number, never one a message had before
            msg.number = self._last_number + 1
        elif msg.number in self.numbered or msg.number < 1:
            raise ValueError(f"message {msg.id!r}: number {msg.number} is taken or not positive")
        self.numbered[msg.number] = msg.id
        self._last_number = max(self._last_number, msg.number)
        self.messages[msg.id] = msg
        self.children[msg.id] = []
        self.children[msg.parent_id].append(msg.id)

    def _require(self, message_id: str) -> Message:
        try:
            return self.messages[message_id]
        except KeyError:
            raise KeyError(f"no message {message_id!r} in conversation {self.id}") from None

    @property
    def root(self) -> Message:
        return self.messages[self.root_id]

    def add_message(self, msg: Message) -> Message:
        """Attach under `msg.parent_id` (the cursor when None) and move the cursor to it."""
        if msg.parent_id is None:
            msg = replace(msg, parent_id=self.current_message_id)
        self._attach(msg)
        self.current_message_id = msg.id
        return msg

    def by_number(self, number: int) -> Message | None:
        """The message `/goto number` means."""
        mid = self.numbered.get(number)
        return self.messages[mid] if mid is not None else None

    def change_current_message(self, message_id: str) -> Message:
        msg = self._require(message_id)
        self.current_message_id = message_id
        return msg

    def get_message_chain(self, message_id: str | None = None) -> list[Message]:
        """Root → message (the cursor by default): the history the model sees."""
        msg: Message | None = self._require(message_id or self.current_message_id)
        chain: list[Message] = []
        while msg is not None:
            chain.append(msg)
            msg = self.messages[msg.parent_id] if msg.parent_id is not None else None
        chain.reverse()
        return chain

    def get_openai_messages(self, message_id: str | None = None) -> list[dict[str, Any]]:
        return [m.to_openai() for m in self.get_message_chain(message_id)]

    def get_children_messages(self, message_id: str) -> list[Message]:
        self._require(message_id)
        return [self.messages[c] for c in self.children[message_id]]

    def get_branch(self, message_id: str) -> list[Message]:
        """The whole subtree under (and including) a message, depth first, children in creation order."""
        self._require(message_id)
        out: list[Message] = []
        stack = [message_id]
        while stack:
            node = stack.pop()
            out.append(self.messages[node])
            stack.extend(reversed(self.children[node]))
        return out

    def get_leaf_ids(self) -> list[str]:
        return [mid for mid, kids in self.children.items() if not kids]

    def is_leaf(self, message_id: str) -> bool:
        self._require(message_id)
        return not self.children[message_id]

    def __len__(self) -> int:
        return len(self.messages)


def compact_path(path: list[Message]) -> list[Message]:
    """A chain as loaded from a store (root side first), made to hold each repeated string once: roles interned,
    each parent id the very string of its parent's id. Sessions keep their path in memory, and a database row
    is a new string per column: for a thousand chats of 100 messages this is ≈ 11 MB less."""
    previous: Message | None = None
    for message in path:
        message.role = sys.intern(message.role)
        if previous is not None and message.parent_id == previous.id:
            message.parent_id = previous.id
        previous = message
    return path
