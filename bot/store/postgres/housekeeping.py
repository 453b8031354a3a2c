"""Conversation housekeeping on PostgreSQL: titles, archive, soft delete and restore, purge, and per-chat
search with ILIKE over a pg_trgm GIN index (the counterpart of SQLite's FTS5 trigram index)."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from bot.store.conversations import ConversationInfo, title_of
from bot.store.dashboard import like_pattern, snippet_around
from bot.store.housekeeping import SEARCH_HITS, ConversationMatch, PurgedConversation, group_matches
from bot.store.postgres.conversations import _ACTIVATE, _CONV_COLUMNS, LIVE, _conv, _info, move_off
from bot.store.postgres.database import Database
from bot.tree.model import files_from_json

MAX_WORDS = 8


async def _unused_files(db: asyncpg.Connection, chat: str, conv_id: str) -> tuple[str, ...]:
    """Files of this conversation's messages that no other message of the chat names (an import may share them)."""
    def paths(rows: list[asyncpg.Record]) -> set[str]:
        return {f.path for row in rows for f in files_from_json(row[0])}

    sql = "SELECT files FROM messages WHERE chat = $1 AND conversation_id {} $2 AND files IS NOT NULL"
    mine = paths(await db.fetch(sql.format("="), chat, conv_id))
    if not mine:
        return ()
    return tuple(sorted(mine - paths(await db.fetch(sql.format("!="), chat, conv_id))))


class PostgresHousekeeping:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def rename(self, chat: str, conv_id: str, title: str) -> ConversationInfo | None:
        sql = (f"UPDATE conversations SET title = $1, title_source = 'user' WHERE chat = $2 AND id = $3 AND {LIVE} "
               f"RETURNING {_CONV_COLUMNS}")
        row = await self._db.pool.fetchrow(sql, title_of(title), chat, conv_id)
        return _info(row) if row else None

    async def auto_title(self, chat: str, conv_id: str, title: str) -> bool:
        sql = (f"UPDATE conversations SET title = $1, title_source = 'auto' WHERE chat = $2 AND id = $3 AND {LIVE} "
               "AND title_source = '' RETURNING id")
        return await self._db.pool.fetchval(sql, title_of(title), chat, conv_id) is not None

    async def set_archived(self, chat: str, conv_id: str, archived: bool) -> ConversationInfo | None:
        async with self._db.pool.acquire() as db, db.transaction():
            if await _conv(db, chat, conv_id, lock=True) is None:
                return None
            await db.execute("UPDATE conversations SET archived = $1 WHERE chat = $2 AND id = $3",
                             archived, chat, conv_id)
            if archived:
                await move_off(db, chat, conv_id)
            return await _conv(db, chat, conv_id)

    async def delete(self, chat: str, conv_id: str, at: datetime) -> ConversationInfo | None:
        async with self._db.pool.acquire() as db, db.transaction():
            info = await _conv(db, chat, conv_id, lock=True)
            if info is not None:
                await db.execute("UPDATE conversations SET deleted_at = $1 WHERE chat = $2 AND id = $3",
                                 at, chat, conv_id)
                await move_off(db, chat, conv_id)
            return info

    async def restore(self, chat: str, since: datetime) -> ConversationInfo | None:
        async with self._db.pool.acquire() as db, db.transaction():
            row = await db.fetchrow("SELECT id, deleted_at FROM conversations WHERE chat = $1 AND deleted_at IS NOT "
                                    "NULL ORDER BY deleted_at DESC LIMIT 1 FOR UPDATE", chat)
            if row is None or row[1] < since:
                return None
            await db.execute("UPDATE conversations SET deleted_at = NULL WHERE chat = $1 AND id = $2", chat, row[0])
            await db.execute("DELETE FROM conversations WHERE chat = $1 AND message_count = 0 AND id = "
                             "(SELECT active_conversation FROM chats WHERE key = $1)", chat)  # nothing to lose
            await db.execute(_ACTIVATE, chat, row[0])
            return await _conv(db, chat, row[0])

    async def purge(self, before: datetime) -> list[PurgedConversation]:
        async with self._db.pool.acquire() as db, db.transaction():
            gone = await db.fetch("SELECT chat, id FROM conversations WHERE deleted_at < $1 FOR UPDATE SKIP LOCKED",
                                  before)
            purged = []
            for chat, conv_id in gone:
                purged.append(PurgedConversation(chat, conv_id, await _unused_files(db, chat, conv_id)))
                for table in ("messages", "summaries"):
                    await db.execute(f"DELETE FROM {table} WHERE chat = $1 AND conversation_id = $2", chat, conv_id)
                await db.execute("DELETE FROM conversations WHERE chat = $1 AND id = $2", chat, conv_id)
            return purged

    async def search(self, chat: str, query: str, limit: int = 8) -> list[ConversationMatch]:
        words = list(dict.fromkeys(query.split()))[:MAX_WORDS]
        if not words or limit < 1:
            return []
        where = " AND ".join(f"m.content ILIKE ${i} ESCAPE '\\'" for i in range(3, len(words) + 3))
        sql = ("SELECT m.conversation_id, m.id, m.content FROM messages AS m JOIN conversations AS c "
               f"ON c.chat = m.chat AND c.id = m.conversation_id AND c.{LIVE} "
               f"WHERE m.chat = $1 AND {where} ORDER BY m.seq DESC LIMIT $2")
        async with self._db.pool.acquire() as db:
            rows = await db.fetch(sql, chat, SEARCH_HITS, *map(like_pattern, words))
            ids = list(dict.fromkeys(r[0] for r in rows))
            infos = {info.id: info for info in map(_info, await db.fetch(
                f"SELECT {_CONV_COLUMNS} FROM conversations WHERE chat = $1 AND id = ANY($2::text[]) AND {LIVE}",
                chat, ids))} if ids else {}
        return group_matches([(r[0], r[1], snippet_around(r[2], words[0])) for r in rows], infos, limit)
