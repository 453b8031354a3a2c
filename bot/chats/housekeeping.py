"""Conversation housekeeping for a session: rename, archive, delete with undo, search; and the purge the
ops loop runs. A chat that loses the conversation it is on (deleted, archived) moves to the one the store
chose, and its session follows at once, so the next message never lands in a conversation it cannot see."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from bot.chats.conversations import Conversations
from bot.chats.folders import chat_folder, remove_files
from bot.chats.sessions import Session
from bot.store import ConversationInfo, ConversationMatch, HousekeepingStore
from bot.store.housekeeping import UNDO_WINDOW_SECONDS

log = logging.getLogger("bothub.housekeeping")
UNDO_WINDOW = timedelta(seconds=UNDO_WINDOW_SECONDS)


@dataclass(frozen=True, slots=True)
class Removed:
    """A conversation taken out of sight, and where the chat is now if it was on it."""

    conversation: ConversationInfo
    moved_to: ConversationInfo | None


class Housekeeping:
    def __init__(self, conversations: Conversations, store: HousekeepingStore, data_dir: Path,
                 now: Callable[[], datetime]) -> None:
        self.conversations = conversations
        self.store = store
        self.data_dir = data_dir
        self.now = now  # injected: tests step through the undo window without sleeping

    async def rename(self, session: Session, title: str) -> ConversationInfo | None:
        """Rename the conversation the session is on."""
        assert session.conversation_id is not None
        return await self.store.rename(session.key.storage_key, session.conversation_id, title)

    async def archive(self, session: Session, id_prefix: str) -> Removed:
        found = await self.conversations.resolve(session, id_prefix)
        await self.conversations.flush(session)
        info = await self.store.set_archived(session.key.storage_key, found.id, True)
        return await self._moved(session, info or found)

    async def unarchive(self, session: Session, id_prefix: str) -> ConversationInfo:
        found = await self.conversations.resolve(session, id_prefix)
        return await self.store.set_archived(session.key.storage_key, found.id, False) or found

    async def delete(self, session: Session, id_prefix: str) -> Removed:
        found = await self.conversations.resolve(session, id_prefix)
        await self.conversations.flush(session)
        await self.store.delete(session.key.storage_key, found.id, self.now())
        return await self._moved(session, found)

    async def undo(self, session: Session) -> ConversationInfo | None:
        """Restore the latest deletion of the last UNDO_WINDOW and switch to it; None when there is none."""
        await self.conversations.flush(session)
        restored = await self.store.restore(session.key.storage_key, self.now() - UNDO_WINDOW)
        if restored is not None:
            await self.conversations.follow_active(session)
        return restored

    async def search(self, session: Session, words: str) -> list[ConversationMatch]:
        return await self.store.search(session.key.storage_key, words)

    async def purge(self) -> int:
        """Remove conversations deleted longer than UNDO_WINDOW ago, and their files; returns how many."""
        purged = await self.store.purge(self.now() - UNDO_WINDOW)
        for gone in purged:
            if gone.files:
                folder = chat_folder(self.data_dir, gone.chat)
                removed = await asyncio.to_thread(remove_files, folder, gone.files)
                log.info("purged conversation %s of %s with %d file(s)", gone.id, gone.chat, removed)
        return len(purged)

    async def _moved(self, session: Session, info: ConversationInfo) -> Removed:
        if session.conversation_id != info.id:
            return Removed(info, None)
        return Removed(info, await self.conversations.follow_active(session))
