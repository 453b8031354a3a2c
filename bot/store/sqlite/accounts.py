"""Dashboard accounts on SQLite (bot/store/accounts.py); the agents as a JSON list."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bot.store.accounts import Account
from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database


def _account(row: Sequence[Any]) -> Account:
    return Account(row[0], row[1], tuple(json.loads(row[2])), datetime.fromisoformat(row[3]))


class SqliteAccounts:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def put(self, account: Account, password_hash: str | None) -> None:
        def op(db: sqlite3.Connection) -> None:
            db.execute("INSERT INTO dashboard_accounts (name, role, agents, password_hash, created_at) "
                       "VALUES (?, ?, ?, coalesce(?, ''), ?) ON CONFLICT (name) DO UPDATE SET role = excluded.role, "
                       "agents = excluded.agents, password_hash = coalesce(?, dashboard_accounts.password_hash)",
                       (account.name, account.role, json.dumps(list(account.agents)), password_hash, now_iso(),
                        password_hash))

        await self._db.write(op)

    async def get(self, name: str) -> tuple[Account, str] | None:
        sql = "SELECT name, role, agents, created_at, password_hash FROM dashboard_accounts WHERE name = ?"
        row = await self._db.read(lambda db: db.execute(sql, (name,)).fetchone())
        return (_account(row), row[4]) if row else None

    async def list(self) -> list[Account]:
        sql = "SELECT name, role, agents, created_at FROM dashboard_accounts ORDER BY name"
        return [_account(row) for row in await self._db.read(lambda db: db.execute(sql).fetchall())]

    async def remove(self, name: str) -> bool:
        sql = "DELETE FROM dashboard_accounts WHERE name = ?"
        return bool(await self._db.write(lambda db: db.execute(sql, (name,)).rowcount))
