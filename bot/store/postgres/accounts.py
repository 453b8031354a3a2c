"""Dashboard accounts on PostgreSQL (bot/store/accounts.py); the agents as a text array."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.store.accounts import Account
from bot.store.postgres.database import Database
from bot.tree.model import utc_now


def _account(r: Mapping[str, Any]) -> Account:
    return Account(r["name"], r["role"], tuple(r["agents"]), r["created_at"])


class PostgresAccounts:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def put(self, account: Account, password_hash: str | None) -> None:
        await self._db.pool.execute(
            "INSERT INTO dashboard_accounts (name, role, agents, password_hash, created_at) "
            "VALUES ($1, $2, $3, coalesce($4, ''), $5) ON CONFLICT (name) DO UPDATE SET role = excluded.role, "
            "agents = excluded.agents, password_hash = coalesce($4, dashboard_accounts.password_hash)",
            account.name, account.role, list(account.agents), password_hash, utc_now())

    async def get(self, name: str) -> tuple[Account, str] | None:
        r = await self._db.pool.fetchrow("SELECT name, role, agents, created_at, password_hash FROM dashboard_accounts "
                                         "WHERE name = $1", name)
        return (_account(r), r["password_hash"]) if r else None

    async def list(self) -> list[Account]:
        rows = await self._db.pool.fetch("SELECT name, role, agents, created_at FROM dashboard_accounts ORDER BY name")
        return [_account(r) for r in rows]

    async def remove(self, name: str) -> bool:
        return await self._db.pool.fetchval("DELETE FROM dashboard_accounts WHERE name = $1 RETURNING name",
                                            name) is not None
