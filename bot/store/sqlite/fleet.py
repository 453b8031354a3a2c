"""Agents, identities, bindings and their history on SQLite (bot/store/fleet.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any, cast

from bot.store.fleet import FleetChange, FleetRow, Kind
from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database


def _change(row: Sequence[Any]) -> FleetChange:
    return FleetChange(row[0], datetime.fromisoformat(row[1]), row[2], row[3], row[4], row[5], row[6], bool(row[7]))


def _record(db: sqlite3.Connection, actor: str, kind: str, name: str, action: str, spec: str, creds: bool) -> None:
    db.execute("INSERT INTO fleet_changes (at, actor, kind, name, action, spec, credentials) "
               "VALUES (?, ?, ?, ?, ?, ?, ?)", (now_iso(), actor, kind, name, action, spec, int(creds)))


class SqliteFleet:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def rows(self) -> list[FleetRow]:
        sql = "SELECT kind, name, spec, sealed, updated_at FROM fleet ORDER BY kind, name"
        rows = await self._db.read(lambda db: db.execute(sql).fetchall())
        return [FleetRow(cast(Kind, r[0]), r[1], r[2], r[3], datetime.fromisoformat(r[4])) for r in rows]

    async def put(self, row: FleetRow, actor: str) -> bool:
        def op(db: sqlite3.Connection) -> bool:
            old = db.execute("SELECT spec FROM fleet WHERE kind = ? AND name = ?", (row.kind, row.name)).fetchone()
            if old is not None and old[0] == row.spec and row.sealed is None:
                return False
            db.execute("INSERT INTO fleet (kind, name, spec, sealed, updated_at) VALUES (?, ?, ?, ?, ?) "
                       "ON CONFLICT (kind, name) DO UPDATE SET spec = excluded.spec, "
                       "sealed = coalesce(excluded.sealed, fleet.sealed), updated_at = excluded.updated_at",
                       (row.kind, row.name, row.spec, row.sealed, now_iso()))
            _record(db, actor, row.kind, row.name, "put", row.spec, row.sealed is not None)
            return True

        return await self._db.write(op)

    async def remove(self, kind: Kind, name: str, actor: str) -> bool:
        def op(db: sqlite3.Connection) -> bool:
            if db.execute("DELETE FROM fleet WHERE kind = ? AND name = ?", (kind, name)).rowcount == 0:
                return False
            _record(db, actor, kind, name, "remove", "", False)
            return True

        return await self._db.write(op)

    async def changes(self, limit: int = 100, kind: Kind | None = None) -> list[FleetChange]:
        sql = ("SELECT id, at, actor, kind, name, action, spec, credentials FROM fleet_changes "
               "WHERE ? IS NULL OR kind = ? ORDER BY id DESC LIMIT ?")
        rows = await self._db.read(lambda db: db.execute(sql, (kind, kind, limit)).fetchall())
        return [_change(r) for r in rows]

    async def version(self) -> int:
        row = await self._db.read(lambda db: db.execute("SELECT max(id) FROM fleet_changes").fetchone())
        return int(row[0] or 0) if row else 0

    async def listen(self, changed: Callable[[], None]) -> Callable[[], Awaitable[None]]:
        async def stop() -> None:  # one process per file: its changes are poked, others' found by polling
            return None

        return stop

    async def reseal(self, change: Callable[[str, str], str]) -> int:
        def op(db: sqlite3.Connection) -> int:
            rows = db.execute("SELECT name, sealed FROM fleet WHERE kind = 'identity' AND sealed IS NOT NULL")
            updated = [(change(sealed, name), name) for name, sealed in rows.fetchall()]
            db.executemany("UPDATE fleet SET sealed = ? WHERE kind = 'identity' AND name = ?", updated)
            return len(updated)

        return await self._db.write(op)
