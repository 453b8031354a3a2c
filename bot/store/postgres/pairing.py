"""Pairing on PostgreSQL: each change is one upsert or update, atomic under the row's lock."""

from __future__ import annotations

from bot.store.pairing import PendingPairing
from bot.store.postgres.database import Database
from bot.tree.model import utc_now

_CODE_SQL = """
INSERT INTO pairing (platform, user_id, code, expires_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (platform, user_id) DO UPDATE SET
    code = CASE WHEN pairing.expires_at > $5 THEN pairing.code ELSE excluded.code END,
    expires_at = CASE WHEN pairing.expires_at > $5 THEN pairing.expires_at ELSE excluded.expires_at END
RETURNING code
"""
_APPROVE_SQL = ("UPDATE pairing SET approved_at = $1, code = NULL, expires_at = NULL "
                "WHERE platform = $2 AND code = $3 AND expires_at > $4 RETURNING user_id")


class PostgresPairing:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def is_paired(self, platform: str, user_id: str) -> bool:
        sql = "SELECT 1 FROM pairing WHERE platform = $1 AND user_id = $2 AND approved_at IS NOT NULL"
        return await self._db.pool.fetchval(sql, platform, user_id) is not None

    async def code_for(self, platform: str, user_id: str, new_code: str, expires_at: float, now: float) -> str:
        return str(await self._db.pool.fetchval(_CODE_SQL, platform, user_id, new_code, expires_at, now))

    async def approve(self, platform: str, code: str, now: float) -> str | None:
        user = await self._db.pool.fetchval(_APPROVE_SQL, utc_now(), platform, code, now)
        return str(user) if user is not None else None

    async def pending(self, now: float) -> list[PendingPairing]:
        sql = ("SELECT platform, user_id, code, expires_at FROM pairing WHERE code IS NOT NULL AND expires_at > $1 "
               "ORDER BY expires_at")
        return [PendingPairing(*row) for row in await self._db.pool.fetch(sql, now)]

    async def deny(self, platform: str, code: str) -> str | None:
        sql = "UPDATE pairing SET code = NULL, expires_at = NULL WHERE platform = $1 AND code = $2 RETURNING user_id"
        user = await self._db.pool.fetchval(sql, platform, code)
        return str(user) if user is not None else None
