"""Conversation housekeeping on SQLite: titles, archive, soft delete and restore, purge, per-chat search
(the dashboard's FTS5 trigram index, narrowed to one chat's live conversations)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from bot.store.conversations import ConversationInfo, title_of
from bot.store.housekeeping import SEARCH_HITS, ConversationMatch, PurgedConversation, group_matches
from bot.store.sqlite.codec import iso
from bot.store.sqlite.conversations import _CONV_COLUMNS, LIVE, _activate, _conv, _info, move_off
from bot.store.sqlite.database import Database
from bot.store.sqlite.search import search
from bot.tree.model import files_from_json


def _unused_files(db: sqlite3.Connection, chat: str, conv_id: str) -> tuple[str, ...]:
    """Files of this conversation's messages that no other message of the chat names (an import may share them)."""
    def paths(rows: list[tuple[str]]) -> set[str]:
        return {f.path for (files,) in rows for f in files_from_json(files)}

    mine = paths(db.execute("SELECT files FROM messages WHERE chat = ? AND conversation_id = ? AND files IS NOT NULL",
                            (chat, conv_id)).fetchall())
    if not mine:
        return ()
    others = paths(db.execute("SELECT files FROM messages WHERE chat = ? AND conversation_id != ? "
                              "AND files IS NOT NULL", (chat, conv_id)).fetchall())
    return tuple(sorted(mine - others))


class SqliteHousekeeping:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def rename(self, chat: str, conv_id: str, title: str) -> ConversationInfo | None:
        def op(db: sqlite3.Connection) -> ConversationInfo | None:
            db.execute("UPDATE conversations SET title = ?, title_source = 'user' "
                       f"WHERE chat = ? AND id = ? AND {LIVE}", (title_of(title), chat, conv_id))
            return _conv(db, chat, conv_id)

        return await self._db.write(op)

    async def auto_title(self, chat: str, conv_id: str, title: str) -> bool:
        sql = (f"UPDATE conversations SET title = ?, title_source = 'auto' WHERE chat = ? AND id = ? AND {LIVE} "
               "AND title_source = ''")
        return bool(await self._db.write(lambda db: db.execute(sql, (title_of(title), chat, conv_id)).rowcount))

    async def set_archived(self, chat: str, conv_id: str, archived: bool) -> ConversationInfo | None:
        def op(db: sqlite3.Connection) -> ConversationInfo | None:
            if _conv(db, chat, conv_id) is None:
                return None
            db.execute("UPDATE conversations SET archived = ? WHERE chat = ? AND id = ?",
                       (int(archived), chat, conv_id))
            if archived:
                move_off(db, chat, conv_id)
            return _conv(db, chat, conv_id)

        return await self._db.write(op)

    async def delete(self, chat: str, conv_id: str, at: datetime) -> ConversationInfo | None:
        def op(db: sqlite3.Connection) -> ConversationInfo | None:
            info = _conv(db, chat, conv_id)
            if info is not None:
                db.execute("UPDATE conversations SET deleted_at = ? WHERE chat = ? AND id = ?",
                           (iso(at), chat, conv_id))
                move_off(db, chat, conv_id)
            return info

        return await self._db.write(op)

    async def restore(self, chat: str, since: datetime) -> ConversationInfo | None:
        def op(db: sqlite3.Connection) -> ConversationInfo | None:
            row = db.execute("SELECT id, deleted_at FROM conversations WHERE chat = ? AND deleted_at IS NOT NULL "
                             "ORDER BY deleted_at DESC LIMIT 1", (chat,)).fetchone()
            if row is None or datetime.fromisoformat(row[1]) < since:
                return None
            db.execute("UPDATE conversations SET deleted_at = NULL WHERE chat = ? AND id = ?", (chat, row[0]))
            db.execute("DELETE FROM conversations WHERE chat = ? AND message_count = 0 AND id = "
                       "(SELECT active_conversation FROM chats WHERE key = ?)", (chat, chat))  # nothing to lose
            _activate(db, chat, row[0])
            return _conv(db, chat, row[0])

        return await self._db.write(op)

    async def purge(self, before: datetime) -> list[PurgedConversation]:
        def op(db: sqlite3.Connection) -> list[PurgedConversation]:
            gone = db.execute("SELECT chat, id FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at < ?",
                              (iso(before),)).fetchall()
            purged = []
            for chat, conv_id in gone:
                purged.append(PurgedConversation(chat, conv_id, _unused_files(db, chat, conv_id)))
                for table in ("messages", "summaries"):
                    db.execute(f"DELETE FROM {table} WHERE chat = ? AND conversation_id = ?", (chat, conv_id))
                db.execute("DELETE FROM conversations WHERE chat = ? AND id = ?", (chat, conv_id))
            return purged

        return await self._db.write(op)

    async def search(self, chat: str, query: str, limit: int = 8) -> list[ConversationMatch]:
        hits = await search(self._db, query, chat=chat, limit=SEARCH_HITS, live_only=True)
        ids = list(dict.fromkeys(h.conversation_id for h in hits))
        if not ids:
            return []
        sql = (f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = ? AND {LIVE} "
               f"AND id IN ({', '.join('?' * len(ids))})")
        rows = await self._db.read(lambda db: db.execute(sql, (chat, *ids)).fetchall())
        infos = {info.id: info for info in map(_info, rows)}
        return group_matches([(h.conversation_id, h.message_id, h.snippet) for h in hits], infos, limit)
