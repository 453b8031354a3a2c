"""Conversation operations shared by the hub and the commands; keeps each session's cached path in step
with the store so sending a message never reloads history."""

from __future__ import annotations

import asyncio

from bot.chats.sessions import Session
from bot.store import ConversationInfo, ConversationStore
from bot.tree.model import Conversation, Message


class ConversationNotFound(Exception):
    pass


class AmbiguousConversation(Exception):
    def __init__(self, ids: list[str]) -> None:
        super().__init__(", ".join(ids))
        self.ids = ids


class Conversations:
    def __init__(self, store: ConversationStore) -> None:
        self.store = store

    async def ensure(self, session: Session) -> None:
        """Load the session's active conversation (creating the first one) on first use: one store call."""
        if session.loaded:
            return
        await self.flush(session)
        opened = await self.store.open_chat(session.key.storage_key)
        if session.loaded:
            return  # a concurrent caller (an immediate command) loaded it first and may have moved on
        session.settings = opened.settings
        self._set(session, opened.conversation, opened.path)

    def _set(self, session: Session, info: ConversationInfo, path: list[Message]) -> None:
        session.conversation_id = info.id
        session.root_id = info.root_id
        session.role = info.role
        session.path = path
        session.loaded = True

    async def _adopt(self, session: Session, info: ConversationInfo) -> None:
        session.conversation_id, session.root_id = info.id, info.root_id
        self._set(session, info, await self._chain(session, info.current_message_id))

    async def _chain(self, session: Session, message_id: str) -> list[Message]:
        if message_id == session.root_id:
            return []
        assert session.conversation_id is not None
        return await self.store.chain(session.key.storage_key, session.conversation_id, message_id)

    async def new(self, session: Session, role: str = "default") -> ConversationInfo:
        await self.flush(session)
        info = await self.store.create(session.key.storage_key, role)
        await self._adopt(session, info)
        return info

    async def resolve(self, session: Session, id_prefix: str) -> ConversationInfo:
        """This chat's conversation with that id or unique id prefix (ConversationNotFound, AmbiguousConversation)."""
        matches = await self.store.find(session.key.storage_key, id_prefix.strip().lower())
        exact = [m for m in matches if m.id == id_prefix]
        if exact:
            matches = exact
        if not matches:
            raise ConversationNotFound(id_prefix)
        if len(matches) > 1:
            raise AmbiguousConversation([m.id for m in matches])
        return matches[0]

    async def switch(self, session: Session, id_prefix: str) -> ConversationInfo:
        await self.flush(session)
        found = await self.resolve(session, id_prefix)
        await self.store.set_active(session.key.storage_key, found.id)
        await self._adopt(session, found)
        return found

    async def follow_active(self, session: Session) -> ConversationInfo:
        """Take up whatever the store now says is the chat's active conversation (after a delete or an undo)."""
        opened = await self.store.open_chat(session.key.storage_key)
        session.settings = opened.settings
        self._set(session, opened.conversation, opened.path)
        return opened.conversation

    def add(self, session: Session, message: Message, held: asyncio.Future[int | None] | None = None
            ) -> asyncio.Task[None]:
        """Attach a message under the cursor now; the returned task stores it, after the session's earlier
        writes. The path moves at once, so a turn can build its prompt while the write is in flight, and
        writes land parent first, so the stored tree is consistent at any moment (even after a kill).
        A `held` write waits for that future: its result is an inbox entry to finish in the same write, or None."""
        assert session.conversation_id is not None
        message.parent_id = session.cursor
        session.path.append(message)
        chat, conv_id, previous = session.key.storage_key, session.conversation_id, session.writing

        async def write() -> None:
            if previous is not None:
                await previous
            if session.aside:
                await self.store.attach(chat, conv_id, [message])
            else:
                await self.store.append(chat, conv_id, [message], await held if held is not None else None)

        task = session.writing = asyncio.create_task(write())
        task.add_done_callback(lambda t: self._written(session, t))
        return task

    @staticmethod
    def _written(session: Session, task: asyncio.Task[None]) -> None:
        if session.writing is task:
            session.writing = None
        if not task.cancelled() and task.exception() is not None:
            session.loaded = False  # the cached path is ahead of the store: reload it on next use

    async def append(self, session: Session, message: Message) -> None:
        """Store a message under the cursor and move the cursor to it."""
        await self.add(session, message)

    async def flush(self, session: Session) -> None:
        """Wait until every write of this session is stored (raises the first failure)."""
        if session.writing is not None:
            await session.writing

    async def branch_off(self, session: Session, messages: list[Message], cursor: str) -> None:
        """Store messages that name their own parents (side branches: a duel's answers, a replay), in one write,
        and put the cursor on `cursor` (one of them, or where it was)."""
        await self.flush(session)
        assert session.conversation_id is not None and all(m.parent_id for m in messages)
        await self.store.append(session.key.storage_key, session.conversation_id, messages)
        await self.move_cursor(session, cursor)

    async def move_cursor(self, session: Session, message_id: str) -> None:
        await self.flush(session)
        assert session.conversation_id is not None
        await self.store.set_cursor(session.key.storage_key, session.conversation_id, message_id)
        session.path = await self._chain(session, message_id)

    async def info(self, session: Session) -> ConversationInfo | None:
        await self.flush(session)
        assert session.conversation_id is not None
        return await self.store.get(session.key.storage_key, session.conversation_id)

    async def tree(self, session: Session, system_prompt: str) -> Conversation:
        await self.flush(session)
        assert session.conversation_id is not None
        conv = await self.store.load(session.key.storage_key, session.conversation_id, system_prompt)
        if conv is None:
            raise ConversationNotFound(session.conversation_id)
        return conv
