"""Pairing on SQLite: one row per (platform, user); a pending code is unique per platform."""

from __future__ import annotations

from bot.store.pairing import PendingPairing
from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database

_CODE_SQL = """
INSERT INTO pairing (platform, user_id, code, expires_at) VALUES (:platform, :user, :code, :expires)
ON CONFLICT (platform, user_id) DO UPDATE SET
    code = CASE WHEN pairing.expires_at > :now THEN pairing.code ELSE excluded.code END,
    expires_at = CASE WHEN pairing.expires_at > :now THEN pairing.expires_at ELSE excluded.expires_at END
RETURNING code
"""
_APPROVE_SQL = ("UPDATE pairing SET approved_at = ?, code = NULL, expires_at = NULL "
                "WHERE platform = ? AND code = ? AND expires_at > ? RETURNING user_id")


class SqlitePairing:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def is_paired(self, platform: str, user_id: str) -> bool:
        sql = "SELECT 1 FROM pairing WHERE platform = ? AND user_id = ? AND approved_at IS NOT NULL"
        return await self._db.read(lambda db: db.execute(sql, (platform, user_id)).fetchone() is not None)

    async def code_for(self, platform: str, user_id: str, new_code: str, expires_at: float, now: float) -> str:
        params = {"platform": platform, "user": user_id, "code": new_code, "expires": expires_at, "now": now}
        row = await self._db.write(lambda db: db.execute(_CODE_SQL, params).fetchone())
        return str(row[0])

    async def approve(self, platform: str, code: str, now: float) -> str | None:
        row = await self._db.write(lambda db: db.execute(_APPROVE_SQL, (now_iso(), platform, code, now)).fetchone())
        return str(row[0]) if row else None

    async def pending(self, now: float) -> list[PendingPairing]:
        sql = ("SELECT platform, user_id, code, expires_at FROM pairing WHERE code IS NOT NULL AND expires_at > ? "
               "ORDER BY expires_at")
        rows = await self._db.read(lambda db: db.execute(sql, (now,)).fetchall())
        return [PendingPairing(*row) for row in rows]

    async def deny(self, platform: str, code: str) -> str | None:
        sql = ("UPDATE pairing SET code = NULL, expires_at = NULL WHERE platform = ? AND code = ? "
               "RETURNING user_id")
        row = await self._db.write(lambda db: db.execute(sql, (platform, code)).fetchone())
        return str(row[0]) if row else None
