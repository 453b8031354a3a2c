"""Forget on request: a chat's whole record — its conversations, messages and their search index, memory,
summaries, traces, jobs, group-context lines, standing approvals, hand-off codes, usage rows and the files in
its folder — erased, with a receipt of what went, and the request in the audit log.

The store deletes in one transaction (bot/store/forget.py lists the tables); the folder goes after, without
following any link a sandboxed command planted (shutil.rmtree works from directory descriptors on Linux).
The session in memory is dropped too, so the chat's next message starts from nothing.

In a group, a member erases their own part (`author`): their messages (left in the tree as erased, since the
answers hang under them), the files they carried, the traces of the runs that answered them, the lines the bot
overheard from them and their usage there; the group's memory is the group's, not theirs.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from bot import jail
from bot.agent.memory import Memory
from bot.agent.trace import TraceWriter
from bot.chats.folders import chat_folder
from bot.chats.sessions import Session
from bot.store import Store


@dataclass(frozen=True)
class Receipt:
    rows: dict[str, int]  # table → rows erased
    files: int

    def lines(self) -> list[str]:
        return [f"{table}: {n}" for table, n in sorted(self.rows.items())] + [f"files: {self.files}"]


def _remove_folder(folder: Path) -> int:
    """Every file under the chat's folder, then the folder; how many files went. Blocking."""
    if not folder.is_dir() or folder.is_symlink():
        return 0
    count = sum(len(files) for _, _, files, _ in os.fwalk(folder))
    shutil.rmtree(folder)
    return count


def _remove_file(folder: Path, path: str) -> int:
    """One file of the chat's folder, through the jail (a planted link is not followed); 1 if it went. Blocking."""
    try:
        return int(jail.unlink(folder, path))
    except (jail.Jailed, OSError):
        return 0


class Forgetting:
    def __init__(self, store: Store, data_dir: Path, memory: Memory | None, traces: TraceWriter | None = None) -> None:
        self.store, self.data_dir, self.memory = store, data_dir, memory
        self.traces = traces  # the traces of runs just ended are still on their way to the store: they go too

    async def _settled(self) -> None:
        if self.traces is not None:
            await self.traces.drain()

    async def chat(self, chat: str, asked_by: str) -> Receipt:
        """Erase everything of `chat` (a storage key)."""
        await self._settled()
        rows = await self.store.forget.forget_chat(chat)
        files = await asyncio.to_thread(_remove_folder, chat_folder(self.data_dir, chat))
        if self.memory is not None:
            self.memory.drop_cached(chat)
        receipt = Receipt(rows, files)
        await self.store.dashboard.add_audit(asked_by, "forget", chat, ", ".join(receipt.lines()))
        return receipt

    async def session(self, session: Session, asked_by: str) -> Receipt:
        """`chat` for a live session, which then forgets what it held in memory."""
        if session.writing is not None:
            await asyncio.gather(session.writing, return_exceptions=True)
        receipt = await self.chat(session.key.storage_key, asked_by)
        session.conversation_id = session.root_id = None
        session.path, session.loaded = [], False
        return receipt

    async def author(self, session: Session, platform: str, user_id: str) -> Receipt:
        """A member's own part of a group chat; the session reloads its branch, now without their words."""
        if session.writing is not None:
            await asyncio.gather(session.writing, return_exceptions=True)
        chat = session.key.storage_key
        await self._settled()
        rows, paths = await self.store.forget.forget_author(chat, platform, user_id)
        folder = chat_folder(self.data_dir, chat)
        files = sum(await asyncio.gather(*(asyncio.to_thread(_remove_file, folder, p) for p in set(paths))))
        session.path, session.loaded = [], False
        receipt = Receipt(rows, files)
        await self.store.dashboard.add_audit(f"{platform}:{user_id}", "forget", f"{chat} (own part)",
                                             ", ".join(receipt.lines()))
        return receipt

    async def user(self, platform: str, user_id: str, asked_by: str) -> Receipt:
        """The person's own rows outside chats (usage, pairing); their DMs are chats: `chat` erases those."""
        rows = await self.store.forget.forget_user(platform, user_id)
        receipt = Receipt(rows, 0)
        await self.store.dashboard.add_audit(asked_by, "forget", f"{platform}:{user_id}", ", ".join(receipt.lines()))
        return receipt
