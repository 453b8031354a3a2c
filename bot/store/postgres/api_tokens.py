"""HTTP API tokens on PostgreSQL: a row per token, found by the digest of the token (unique)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.store.api_tokens import ApiToken
from bot.store.postgres.database import Database
from bot.tree.model import utc_now

_COLUMNS = "id, name, created_at, revoked_at"


def _token(row: Mapping[str, Any]) -> ApiToken:
    return ApiToken(row["id"], row["name"], row["created_at"], row["revoked_at"])


class PostgresApiTokens:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, token_id: str, name: str, digest: str) -> ApiToken:
        sql = f"INSERT INTO api_tokens (id, name, digest, created_at) VALUES ($1, $2, $3, $4) RETURNING {_COLUMNS}"
        return _token(await self._db.pool.fetchrow(sql, token_id, name, digest, utc_now()))

    async def by_digest(self, digest: str) -> ApiToken | None:
        row = await self._db.pool.fetchrow(f"SELECT {_COLUMNS} FROM api_tokens WHERE digest = $1", digest)
        return _token(row) if row else None

    async def list(self) -> list[ApiToken]:
        rows = await self._db.pool.fetch(f"SELECT {_COLUMNS} FROM api_tokens ORDER BY created_at DESC, id")
        return [_token(row) for row in rows]

    async def revoke(self, token_id: str) -> bool:
        sql = "UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id"
        return await self._db.pool.fetchval(sql, utc_now(), token_id) is not None
