"""What the dashboard reads across chats (the one place that may: the admin's own view), and its audit log.

Chat commands never use this Protocol: their queries stay scoped by chat (see `Store`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ChatSummary:
    key: str  # the chat's storage key, "platform:chat_id[#thread]"
    conversations: int
    messages: int
    last_activity: datetime

    @property
    def platform(self) -> str:
        return self.key.split(":", 1)[0]


@dataclass(frozen=True, slots=True)
class NodeRow:
    """One message of a tree without its full text: enough to draw the tree and number it."""

    id: str
    number: int  # the message's fixed `/goto` number
    parent_id: str
    role: str
    preview: str
    created_at: datetime
    has_tool_calls: bool
    interrupted: bool


@dataclass(frozen=True, slots=True)
class SearchHit:
    chat: str
    conversation_id: str
    message_id: str
    role: str
    created_at: datetime
    snippet: tuple[tuple[str, bool], ...]  # (text, is_match) pieces: markup is the renderer's business


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: int
    at: datetime
    actor: str
    action: str
    target: str
    detail: str


SNIPPET_CONTEXT = 40  # characters either side of a match, where a backend cuts snippets itself


def platform_range(platform: str) -> tuple[str, str]:
    """Chat keys of one platform sort between "name:" and "name;" (';' follows ':'): a key-index range."""
    return f"{platform}:", f"{platform};"


def like_pattern(text: str) -> str:
    """`text` anywhere, with LIKE's wildcards taken literally (use with ESCAPE '\\')."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def snippet_around(content: str, word: str) -> tuple[tuple[str, bool], ...]:
    """(text, is_match) pieces around the first case-insensitive occurrence of `word`."""
    at = content.lower().find(word.lower())
    if at < 0:
        return ((content[: 2 * SNIPPET_CONTEXT], False),)
    start, end = max(at - SNIPPET_CONTEXT, 0), at + len(word)
    before = ("…" if start else "") + content[start:at]
    after = content[end : end + SNIPPET_CONTEXT] + ("…" if end + SNIPPET_CONTEXT < len(content) else "")
    return tuple(p for p in ((before, False), (content[at:end], True), (after, False)) if p[0])


class DashboardStore(Protocol):
    async def list_chats(self, query: str = "", platform: str = "", limit: int = 50,
                         offset: int = 0) -> list[ChatSummary]: ...
    async def tree_nodes(self, chat: str, conv_id: str) -> list[NodeRow]: ...
    async def search_messages(self, query: str, chat: str = "", platform: str = "",
                              limit: int = 50) -> list[SearchHit]: ...
    async def add_audit(self, actor: str, action: str, target: str = "", detail: str = "") -> None: ...
    async def list_audit(self, limit: int = 50) -> list[AuditEntry]: ...
