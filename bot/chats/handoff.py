"""Hand-offs: continue a conversation in another chat — another platform, a group, the web chat.

`/handoff` gives a short one-time code that expires; `/resume CODE` in the other chat copies the whole tree
there (message numbers, branches and the files its messages carry) and makes it that chat's current one. With
`/handoff move` the source archives it once resumed. The code is the proof on another platform (nobody can
tell one platform's user from another's); on the same platform only the person who made it may use it, and a
group takes a conversation only when one of its admins resumes it (the group's members will all see it).
Memory stays with its chat: it holds what that chat chose to remember, not one conversation's.
`/handoff link` makes a code that links instead: the DM that resumes it shares this chat's whole history from
then on (bot/chats/links.py).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from bot import jail
from bot.chats.conversations import Conversations
from bot.chats.folders import chat_folder
from bot.chats.links import ChatLinks
from bot.chats.sessions import Session, SessionKey
from bot.store import Store
from bot.store.handoffs import Handoff
from bot.tree.model import Conversation

CODE_TTL = 600.0  # seconds a code stays valid
CODE_LENGTH = 6
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no look-alikes (0/O, 1/I)


def looks_like_code(text: str) -> bool:
    """Shaped like a hand-off code (a spent or expired one too), whatever the case it was typed in."""
    return len(text) == CODE_LENGTH and all(c in _ALPHABET for c in text.upper())


class Refusal(Enum):
    UNKNOWN = "handoff_unknown"  # never made, already used, or expired
    SOMEONE_ELSE = "handoff_someone_else"
    GROUP_ADMIN = "handoff_group_admin"
    SAME_CHAT = "handoff_same_chat"
    GONE = "handoff_gone"  # the conversation was deleted since
    LINK_DM_ONLY = "link_dm_only"  # only two direct chats share one history
    LINKED_ALREADY = "link_already"


@dataclass(frozen=True)
class Resumed:
    title: str
    messages: int
    files: int
    moved: bool


@dataclass(frozen=True)
class Linked:
    home: str  # the storage key of the chat whose history this one shares now


@dataclass(frozen=True)
class Asker:
    """Who runs /resume, where: what the consent rules look at."""

    platform: str
    user_id: str
    is_group: bool
    is_admin: bool
    chat: SessionKey | None = None  # the chat's own key (a linked chat is answered in its home's session)


class Handoffs:
    def __init__(self, store: Store, conversations: Conversations, data_dir: Path, max_file_bytes: int,
                 clock: Callable[[], float] = time.time) -> None:
        self.store, self.conversations, self.data_dir = store, conversations, data_dir
        self.max_file_bytes = max_file_bytes
        self.clock = clock  # unix seconds; tests pass their own
        self.links = ChatLinks(store.handoffs, store.relay)

    async def offer(self, session: Session, platform: str, user_id: str, move: bool, link: bool = False) -> str:
        """A new code for the session's current conversation (`link`: for the session's whole history)."""
        await self.conversations.flush(session)
        assert session.conversation_id is not None
        code = "".join(secrets.choice(_ALPHABET) for _ in range(CODE_LENGTH))
        now = self.clock()
        await self.store.handoffs.offer(Handoff(code, session.key.storage_key, session.conversation_id, platform,
                                                user_id, move, now + CODE_TTL, link), now)
        return code

    async def offered(self, raw_code: str) -> bool:
        """Is this a live code (not spent, not expired)?"""
        return await self.store.handoffs.peek(raw_code.strip().upper(), self.clock()) is not None

    async def resume(self, session: Session, raw_code: str, asker: Asker) -> Resumed | Linked | Refusal:
        code, now = raw_code.strip().upper(), self.clock()
        offered = await self.store.handoffs.peek(code, now)
        if offered is None:
            return Refusal.UNKNOWN
        if refusal := _refusal(offered, session, asker):
            return refusal
        taken = await self.store.handoffs.take(code, now)
        if taken is None:  # someone resumed it in between
            return Refusal.UNKNOWN
        if taken.link:
            await self.links.link(asker.chat or session.key, taken.chat)
            return Linked(taken.chat)
        source = await self.store.conversations.get(taken.chat, taken.conversation_id)
        conv = await self.store.conversations.load(taken.chat, taken.conversation_id, "")
        if source is None or conv is None:
            return Refusal.GONE
        target = session.key.storage_key
        files = await asyncio.to_thread(self._copy_files, conv, taken.chat, target)
        info = await self.store.conversations.import_tree(target, conv, source.role)
        if source.title:
            await self.store.housekeeping.rename(target, info.id, source.title)
        await self.conversations.switch(session, info.id)
        if taken.move:
            await self.store.housekeeping.set_archived(taken.chat, taken.conversation_id, True)
        return Resumed(source.title, len(conv.messages) - 1, files, taken.move)

    def _copy_files(self, conv: Conversation, source: str, target: str) -> int:
        """The files the tree's messages carry, copied to the same paths in the target chat's folder, through the
        jail on both sides (a link planted in either folder is neither read nor written through). Blocking."""
        src, dst = chat_folder(self.data_dir, source), chat_folder(self.data_dir, target)
        copied = 0
        for attached in {f.path: f for m in conv.messages.values() for f in m.files}.values():
            try:
                data = jail.read_bytes(src, attached.path, self.max_file_bytes)
                if jail.kind(dst, attached.path) is None:
                    fd = jail.open_file(dst, attached.path, write=True)
                    with open(fd, "wb") as out:
                        out.write(data)
                    copied += 1
            except (jail.Jailed, OSError):
                continue  # a file gone or refused: the message still says what it was
        return copied


def _refusal(offered: Handoff, session: Session, asker: Asker) -> Refusal | None:
    if offered.chat == session.key.storage_key:
        return Refusal.LINKED_ALREADY if offered.link and asker.chat not in (None, session.key) else Refusal.SAME_CHAT
    if offered.link and asker.is_group:
        return Refusal.LINK_DM_ONLY
    if offered.platform == asker.platform and offered.user_id != asker.user_id:
        return Refusal.SOMEONE_ELSE
    if asker.is_group and not asker.is_admin:
        return Refusal.GROUP_ADMIN
    return None
