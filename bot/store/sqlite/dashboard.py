"""The dashboard's reads across chats and its audit log on SQLite (search is in search.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bot.store.dashboard import AuditEntry, ChatSummary, NodeRow, SearchHit, like_pattern, platform_range
from bot.store.memories import bounded
from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database
from bot.store.sqlite.search import search

PREVIEW_CHARS = 160


def _rows(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    return db.execute(sql, params).fetchall()


class SqliteDashboard:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def list_chats(self, query: str = "", platform: str = "", limit: int = 50,
                         offset: int = 0) -> list[ChatSummary]:
        """Chats with their conversation and message counts, most recently active first."""
        where: list[str] = ["1"]
        params: list[object] = []
        if platform:
            where.append("chat >= ? AND chat < ?")
            params += platform_range(platform)
        if query:
            where.append("(chat LIKE ? ESCAPE '\\' OR title LIKE ? ESCAPE '\\')")
            params += [like_pattern(query)] * 2
        sql = (f"SELECT chat, COUNT(*), SUM(message_count), MAX(updated_at) FROM conversations "
               f"WHERE {' AND '.join(where)} GROUP BY chat ORDER BY MAX(updated_at) DESC LIMIT ? OFFSET ?")
        rows = await self._db.read(lambda db: _rows(db, sql, [*params, bounded(limit), bounded(offset)]))
        return [ChatSummary(key, convs, msgs or 0, datetime.fromisoformat(last)) for key, convs, msgs, last in rows]

    async def tree_nodes(self, chat: str, conv_id: str) -> list[NodeRow]:
        """Every message of one conversation in creation order, text cut to a preview: the tree's skeleton."""
        sql = ("SELECT id, number, parent_id, role, substr(content, 1, ?), created_at, tool_calls IS NOT NULL, "
               "interrupted FROM messages WHERE chat = ? AND conversation_id = ? ORDER BY seq")
        rows = await self._db.read(lambda db: _rows(db, sql, (PREVIEW_CHARS, chat, conv_id)))
        return [NodeRow(mid, number, parent, role, preview, datetime.fromisoformat(created), bool(calls), bool(cut))
                for mid, number, parent, role, preview, created, calls, cut in rows]

    async def add_audit(self, actor: str, action: str, target: str = "", detail: str = "") -> None:
        sql = "INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)"
        now = now_iso()
        await self._db.write(lambda db: db.execute(sql, (now, actor, action, target, detail)))

    async def list_audit(self, limit: int = 50) -> list[AuditEntry]:
        sql = "SELECT id, at, actor, action, target, detail FROM audit_log ORDER BY id DESC LIMIT ?"
        rows = await self._db.read(lambda db: _rows(db, sql, (bounded(limit),)))
        return [AuditEntry(i, datetime.fromisoformat(at), actor, action, target, detail)
                for i, at, actor, action, target, detail in rows]

    async def search_messages(self, query: str, chat: str = "", platform: str = "",
                              limit: int = 50) -> list[SearchHit]:
        return await search(self._db, query, chat, platform, limit)
