"""Conversation housekeeping, per chat: titles, archive, soft delete with undo, purge, and search.

Every method is scoped by chat like `ConversationStore`: another chat's id behaves like a random one.
A deleted conversation disappears from every chat-facing read at once; its rows stay until `purge`
(after the undo window), so `restore` can bring it back whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from bot.store.conversations import ConversationInfo

UNDO_WINDOW_SECONDS = 600  # a deleted conversation can be restored for 10 minutes, then it is purged
SEARCH_HITS = 60  # matching messages read per search; grouped by conversation afterwards


@dataclass(frozen=True, slots=True)
class ConversationMatch:
    """A conversation with a message that contains every word searched for (the newest such message)."""

    conversation: ConversationInfo
    message_id: str
    snippet: tuple[tuple[str, bool], ...]  # (text, is_match) pieces


@dataclass(frozen=True, slots=True)
class PurgedConversation:
    chat: str
    id: str
    files: tuple[str, ...]  # paths relative to the chat's folder that no remaining message refers to


class HousekeepingStore(Protocol):
    async def rename(self, chat: str, conv_id: str, title: str) -> ConversationInfo | None:
        """A title the user chose: automatic titles never replace it. None if there is no such conversation."""
        ...

    async def auto_title(self, chat: str, conv_id: str, title: str) -> bool:
        """Replace the first-message title with a generated one; False (nothing written) once the
        conversation has a generated or chosen title, or is gone."""
        ...

    async def set_archived(self, chat: str, conv_id: str, archived: bool) -> ConversationInfo | None:
        """Archiving the chat's active conversation makes the most recent visible one (or a new one) active."""
        ...

    async def delete(self, chat: str, conv_id: str, at: datetime) -> ConversationInfo | None:
        """Soft delete (moves the chat off it like archiving); None if there is no such conversation."""
        ...

    async def restore(self, chat: str, since: datetime) -> ConversationInfo | None:
        """Undelete the chat's conversation deleted most recently, if that was at or after `since`; it becomes
        the active one, and the conversation the chat was on goes if it is empty (made by the delete, say)."""
        ...

    async def purge(self, before: datetime) -> list[PurgedConversation]:
        """Remove for good every conversation deleted before `before`, with its messages and summaries."""
        ...

    async def search(self, chat: str, query: str, limit: int = 8) -> list[ConversationMatch]:
        """This chat's live conversations (archived ones too) with a message containing every word
        (case-insensitive), most recent match first, one entry per conversation."""
        ...


def group_matches(hits: list[tuple[str, str, tuple[tuple[str, bool], ...]]],
                  infos: dict[str, ConversationInfo], limit: int) -> list[ConversationMatch]:
    """(conversation id, message id, snippet) hits, newest first → one match per conversation."""
    seen: dict[str, ConversationMatch] = {}
    for conv_id, message_id, snippet in hits:
        if conv_id not in seen and conv_id in infos and len(seen) < limit:
            seen[conv_id] = ConversationMatch(infos[conv_id], message_id, snippet)
    return list(seen.values())
