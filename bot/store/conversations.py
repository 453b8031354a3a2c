"""Conversations and their message trees, per chat (seed 000).

Every method is scoped by chat, so another chat's conversation id behaves exactly like a random one, and
a soft-deleted conversation (see `bot.store.housekeeping`) exactly like one that never existed.
Messages are append-only; the cursor is the one thing that moves. The system prompt is never stored:
callers pass the current one when loading a tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from bot.store.settings import ChatSettings
from bot.tree.model import Conversation, Message

TITLE_MAX = 60
STORED_ROLES = frozenset({"user", "assistant", "tool"})
ID_ATTEMPTS = 5  # a lone message whose 8-hex id is taken draws another this many times
HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    id: str
    chat: str
    root_id: str
    title: str
    role: str
    current_message_id: str
    message_count: int
    created_at: datetime
    updated_at: datetime
    archived: bool = False  # hidden from `/list` (shown by `/list all`) until unarchived or switched to


@dataclass(frozen=True, slots=True)
class OpenedChat:
    """Everything a session needs on first use, read in one operation."""

    settings: ChatSettings
    conversation: ConversationInfo
    path: list[Message]  # root-exclusive, up to the cursor


class ConversationStore(Protocol):
    async def create(self, chat: str, role: str = "default") -> ConversationInfo:
        """A new empty conversation that becomes the chat's active one."""
        ...

    async def open_chat(self, chat: str) -> OpenedChat:
        """Settings, active conversation (the chat's first is created here) and the path to its cursor."""
        ...

    async def get(self, chat: str, conv_id: str) -> ConversationInfo | None: ...

    async def find(self, chat: str, id_prefix: str) -> list[ConversationInfo]:
        """Conversations whose id starts with a hex prefix (at most 10), by id."""
        ...

    async def recent(self, chat: str, limit: int = 20, offset: int = 0,
                     include_archived: bool = False) -> list[ConversationInfo]:
        """Most recently updated first; deleted ones never, archived ones only when asked for."""
        ...

    async def count(self, chat: str, include_archived: bool = False) -> int: ...

    async def summaries(self) -> list[tuple[str, int]]:
        """Every chat key with its number of conversations: the operator's view for `bothub chats`."""
        ...

    async def active(self, chat: str) -> str | None: ...

    async def set_active(self, chat: str, conv_id: str) -> None:
        """KeyError if the chat has no such conversation; an archived one is unarchived (it is in use again)."""
        ...

    async def append(self, chat: str, conv_id: str, msgs: Sequence[Message], finishes: int | None = None) -> None:
        """Insert in order, move the cursor to the last, bump count, updated_at and title: all or nothing.

        A message whose parent_id is None goes under the cursor. KeyError for an unknown conversation or
        parent, ValueError for a role that is not stored or an id taken in a batch. `finishes` is an inbox
        entry this batch answers: it leaves the inbox in the same transaction (one round trip for both).
        """
        ...

    async def attach(self, chat: str, conv_id: str, msgs: Sequence[Message]) -> None:
        """`append` for a side branch growing beside the conversation (a background task's steps): the messages
        name their parents, and the cursor stays where the conversation is, whatever else is written meanwhile."""
        ...

    async def set_cursor(self, chat: str, conv_id: str, message_id: str) -> None: ...

    async def chain(self, chat: str, conv_id: str, message_id: str) -> list[Message]:
        """Root-exclusive path to a message; cost grows with its depth, not with the store."""
        ...

    async def load(self, chat: str, conv_id: str, system_prompt: str) -> Conversation | None:
        """The whole tree, with today's system prompt as its root."""
        ...

    async def message(self, chat: str, conv_id: str, message_id: str) -> Message | None: ...

    async def import_tree(self, chat: str, conv: Conversation, role: str = "default") -> ConversationInfo:
        """Store a whole tree keeping message ids; a taken or odd conversation id is replaced. The
        imported conversation does not become the active one."""
        ...


def title_of(content: str) -> str:
    """One line, at most TITLE_MAX characters: what `/list` shows for a conversation."""
    line = " ".join(content[: TITLE_MAX * 8].split())
    return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1] + "…"


def is_conversation_id(value: str) -> bool:
    return len(value) == 8 and set(value) <= HEX
