"""The dashboard's reads across chats, its search and its audit log on PostgreSQL.

Search matches each word with strpos over lower-cased text, newest first: any language, no extension to
install, but no index either (SQLite's FTS5 trigram index has no counterpart here yet).
"""

from __future__ import annotations

from typing import Any

from bot.store.dashboard import AuditEntry, ChatSummary, NodeRow, SearchHit, platform_range, snippet_around
from bot.store.memories import bounded
from bot.store.postgres.database import Database
from bot.tree.model import utc_now

PREVIEW_CHARS = 160
MAX_WORDS = 8


class PostgresDashboard:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def list_chats(self, query: str = "", platform: str = "", limit: int = 50,
                         offset: int = 0) -> list[ChatSummary]:
        where: list[str] = ["TRUE"]
        params: list[Any] = [bounded(limit), bounded(offset)]
        if platform:
            params += platform_range(platform)
            where.append(f"chat >= ${len(params) - 1} AND chat < ${len(params)}")
        if query:
            params.append(query.lower())
            where.append(f"(strpos(lower(chat), ${len(params)}) > 0 OR strpos(lower(title), ${len(params)}) > 0)")
        sql = (f"SELECT chat, COUNT(*), SUM(message_count), MAX(updated_at) FROM conversations "
               f"WHERE {' AND '.join(where)} GROUP BY chat ORDER BY MAX(updated_at) DESC LIMIT $1 OFFSET $2")
        rows = await self._db.pool.fetch(sql, *params)
        return [ChatSummary(r[0], r[1], int(r[2] or 0), r[3]) for r in rows]

    async def tree_nodes(self, chat: str, conv_id: str) -> list[NodeRow]:
        sql = ("SELECT id, number, parent_id, role, left(content, $3), created_at, tool_calls IS NOT NULL, "
               "interrupted FROM messages WHERE chat = $1 AND conversation_id = $2 ORDER BY seq")
        rows = await self._db.pool.fetch(sql, chat, conv_id, PREVIEW_CHARS)
        return [NodeRow(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), bool(r[7])) for r in rows]

    async def search_messages(self, query: str, chat: str = "", platform: str = "",
                              limit: int = 50) -> list[SearchHit]:
        words = list(dict.fromkeys(query.split()))[:MAX_WORDS]
        if not words or limit < 1:
            return []
        params: list[Any] = [bounded(limit)]
        where = []
        for word in words:
            params.append(word.lower())
            where.append(f"strpos(lower(content), ${len(params)}) > 0")
        if chat:
            params.append(chat)
            where.append(f"chat = ${len(params)}")
        if platform:
            params += platform_range(platform)
            where.append(f"chat >= ${len(params) - 1} AND chat < ${len(params)}")
        sql = (f"SELECT chat, conversation_id, id, role, created_at, content FROM messages "
               f"WHERE {' AND '.join(where)} ORDER BY seq DESC LIMIT $1")
        rows = await self._db.pool.fetch(sql, *params)
        return [SearchHit(r[0], r[1], r[2], r[3], r[4], snippet_around(r[5], words[0])) for r in rows]

    async def add_audit(self, actor: str, action: str, target: str = "", detail: str = "") -> None:
        sql = "INSERT INTO audit_log (at, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5)"
        await self._db.pool.execute(sql, utc_now(), actor, action, target, detail)

    async def list_audit(self, limit: int = 50) -> list[AuditEntry]:
        sql = "SELECT id, at, actor, action, target, detail FROM audit_log ORDER BY id DESC LIMIT $1"
        rows = await self._db.pool.fetch(sql, bounded(limit))
        return [AuditEntry(*r) for r in rows]
