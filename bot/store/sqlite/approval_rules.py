"""Standing approvals on SQLite: a row per rule, matched on the command's exact text."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bot.store.approval_rules import ApprovalRule
from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database

_COLUMNS = "id, chat, conversation, kind, command, granted_by, created_at"


def _rule(row: Sequence[Any]) -> ApprovalRule:
    return ApprovalRule(row[0], row[1], row[2], row[3], row[4], row[5], datetime.fromisoformat(row[6]))


class SqliteApprovalRules:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, chat: str, conversation: str | None, kind: str, command: str,
                  granted_by: str) -> ApprovalRule:
        sql = (f"INSERT INTO approval_rules (chat, conversation, kind, command, granted_by, created_at) "
               f"VALUES (?, ?, ?, ?, ?, ?) RETURNING {_COLUMNS}")
        values = (chat, conversation, kind, command, granted_by, now_iso())
        return _rule(await self._db.write(lambda db: db.execute(sql, values).fetchone()))

    async def find(self, chat: str, conversation: str | None, kind: str, command: str) -> ApprovalRule | None:
        sql = (f"SELECT {_COLUMNS} FROM approval_rules WHERE chat = ? AND kind = ? AND command = ? "
               "AND (conversation IS NULL OR conversation = ?) ORDER BY id LIMIT 1")
        row = await self._db.read(lambda db: db.execute(sql, (chat, kind, command, conversation)).fetchone())
        return _rule(row) if row else None

    async def list(self, chat: str | None = None) -> list[ApprovalRule]:
        sql = f"SELECT {_COLUMNS} FROM approval_rules WHERE ? IS NULL OR chat = ? ORDER BY id"
        return [_rule(row) for row in await self._db.read(lambda db: db.execute(sql, (chat, chat)).fetchall())]

    async def revoke(self, rule_id: int, chat: str | None = None) -> ApprovalRule | None:
        sql = f"DELETE FROM approval_rules WHERE id = ? AND (? IS NULL OR chat = ?) RETURNING {_COLUMNS}"
        row = await self._db.write(lambda db: db.execute(sql, (rule_id, chat, chat)).fetchone())
        return _rule(row) if row else None
