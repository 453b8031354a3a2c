"""Pairing on SQLite: one row per (platform, user); a pending code is unique per platform."""

from __future__ import annotations

import sqlite3

from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database

_APPROVE_SQL = ("UPDATE pairing SET approved_at = ?, code = NULL, expires_at = NULL "
                "WHERE platform = ? AND code = ? AND expires_at > ? RETURNING user_id")


class SqlitePairing:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def is_paired(self, platform: str, user_id: str) -> bool:
        sql = "SELECT 1 FROM pairing WHERE platform = ? AND user_id = ? AND approved_at IS NOT NULL"
        return await self._db.read(lambda db: db.execute(sql, (platform, user_id)).fetchone() is not None)

    async def code_for(self, platform: str, user_id: str, new_code: str, expires_at: float, now: float) -> str:
        def op(db: sqlite3.Connection) -> str:
            sql = "SELECT code FROM pairing WHERE platform = ? AND user_id = ? AND expires_at > ?"
            row = db.execute(sql, (platform, user_id, now)).fetchone()
            if row:
                return str(row[0])
            db.execute("INSERT INTO pairing (platform, user_id, code, expires_at) VALUES (?, ?, ?, ?) "
                       "ON CONFLICT (platform, user_id) DO UPDATE SET code = excluded.code, "
                       "expires_at = excluded.expires_at", (platform, user_id, new_code, expires_at))
            return new_code

        return await self._db.write(op)

    async def approve(self, platform: str, code: str, now: float) -> str | None:
        row = await self._db.write(lambda db: db.execute(_APPROVE_SQL, (now_iso(), platform, code, now)).fetchone())
        return str(row[0]) if row else None
