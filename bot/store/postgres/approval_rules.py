"""Standing approvals on PostgreSQL: a row per rule, matched on the command's exact text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.store.approval_rules import ApprovalRule
from bot.store.postgres.database import Database
from bot.tree.model import utc_now

_COLUMNS = "id, chat, conversation, kind, command, granted_by, created_at"


def _rule(row: Mapping[str, Any]) -> ApprovalRule:
    return ApprovalRule(row["id"], row["chat"], row["conversation"], row["kind"], row["command"],
                        row["granted_by"], row["created_at"])


class PostgresApprovalRules:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, chat: str, conversation: str | None, kind: str, command: str,
                  granted_by: str) -> ApprovalRule:
        sql = (f"INSERT INTO approval_rules (chat, conversation, kind, command, granted_by, created_at) "
               f"VALUES ($1, $2, $3, $4, $5, $6) RETURNING {_COLUMNS}")
        return _rule(await self._db.pool.fetchrow(sql, chat, conversation, kind, command, granted_by, utc_now()))

    async def find(self, chat: str, conversation: str | None, kind: str, command: str) -> ApprovalRule | None:
        sql = (f"SELECT {_COLUMNS} FROM approval_rules WHERE chat = $1 AND kind = $2 AND command = $3 "
               "AND (conversation IS NULL OR conversation = $4) ORDER BY id LIMIT 1")
        row = await self._db.pool.fetchrow(sql, chat, kind, command, conversation)
        return _rule(row) if row else None

    async def list(self, chat: str | None = None) -> list[ApprovalRule]:
        sql = f"SELECT {_COLUMNS} FROM approval_rules WHERE $1::text IS NULL OR chat = $1 ORDER BY id"
        return [_rule(row) for row in await self._db.pool.fetch(sql, chat)]

    async def revoke(self, rule_id: int, chat: str | None = None) -> ApprovalRule | None:
        sql = f"DELETE FROM approval_rules WHERE id = $1 AND ($2::text IS NULL OR chat = $2) RETURNING {_COLUMNS}"
        row = await self._db.pool.fetchrow(sql, rule_id, chat)
        return _rule(row) if row else None
