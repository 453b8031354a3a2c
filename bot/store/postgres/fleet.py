"""Agents, identities, bindings and their history on PostgreSQL (bot/store/fleet.py); every change is also a
NOTIFY on `bothub_fleet`, so other replicas reload at once instead of at their next poll."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import asyncpg

from bot.store.fleet import FleetChange, FleetRow, Kind
from bot.store.postgres.database import Database
from bot.tree.model import utc_now

CHANNEL = "bothub_fleet"


def _change(r: Mapping[str, Any]) -> FleetChange:
    return FleetChange(r["id"], r["at"], r["actor"], r["kind"], r["name"], r["action"], r["spec"], r["credentials"])


async def _record(conn: asyncpg.Connection, actor: str, kind: str, name: str, action: str, spec: str,
                  creds: bool) -> None:
    change = await conn.fetchval(
        "INSERT INTO fleet_changes (at, actor, kind, name, action, spec, credentials) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id", utc_now(), actor, kind, name, action, spec, creds)
    await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, str(change))  # delivered at commit


class PostgresFleet:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def rows(self) -> list[FleetRow]:
        rows = await self._db.pool.fetch("SELECT kind, name, spec, sealed, updated_at FROM fleet ORDER BY kind, name")
        return [FleetRow(r["kind"], r["name"], r["spec"], r["sealed"], r["updated_at"]) for r in rows]

    async def put(self, row: FleetRow, actor: str) -> bool:
        async with self._db.pool.acquire() as conn, conn.transaction():
            old = await conn.fetchval("SELECT spec FROM fleet WHERE kind = $1 AND name = $2 FOR UPDATE",
                                      row.kind, row.name)
            if old is not None and old == row.spec and row.sealed is None:
                return False
            await conn.execute(
                "INSERT INTO fleet (kind, name, spec, sealed, updated_at) VALUES ($1, $2, $3, $4, $5) "
                "ON CONFLICT (kind, name) DO UPDATE SET spec = excluded.spec, "
                "sealed = coalesce(excluded.sealed, fleet.sealed), updated_at = excluded.updated_at",
                row.kind, row.name, row.spec, row.sealed, utc_now())
            await _record(conn, actor, row.kind, row.name, "put", row.spec, row.sealed is not None)
            return True

    async def remove(self, kind: Kind, name: str, actor: str) -> bool:
        async with self._db.pool.acquire() as conn, conn.transaction():
            gone = await conn.fetchval("DELETE FROM fleet WHERE kind = $1 AND name = $2 RETURNING name", kind, name)
            if gone is None:
                return False
            await _record(conn, actor, kind, name, "remove", "", False)
            return True

    async def changes(self, limit: int = 100, kind: Kind | None = None) -> list[FleetChange]:
        rows = await self._db.pool.fetch(
            "SELECT id, at, actor, kind, name, action, spec, credentials FROM fleet_changes "
            "WHERE $1::text IS NULL OR kind = $1 ORDER BY id DESC LIMIT $2", kind, limit)
        return [_change(r) for r in rows]

    async def version(self) -> int:
        return int(await self._db.pool.fetchval("SELECT coalesce(max(id), 0) FROM fleet_changes"))

    async def listen(self, changed: Callable[[], None]) -> Callable[[], Awaitable[None]]:
        conn = await asyncpg.connect(self._db.url)
        await conn.add_listener(CHANNEL, lambda *_: changed())

        async def stop() -> None:
            await conn.close()

        return stop

    async def reseal(self, change: Callable[[str, str], str]) -> int:
        async with self._db.pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch("SELECT name, sealed FROM fleet WHERE kind = 'identity' AND sealed IS NOT NULL "
                                    "FOR UPDATE")
            await conn.executemany("UPDATE fleet SET sealed = $1 WHERE kind = 'identity' AND name = $2",
                                   [(change(r["sealed"], r["name"]), r["name"]) for r in rows])
            return len(rows)
