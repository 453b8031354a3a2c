"""HTTP API tokens on SQLite: a row per token, found by the digest of the token (unique)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bot.store.api_tokens import ApiToken
from bot.store.sqlite.codec import now_iso, parse_time
from bot.store.sqlite.database import Database

_COLUMNS = "id, name, created_at, revoked_at"


def _token(row: Sequence[Any]) -> ApiToken:
    return ApiToken(row[0], row[1], datetime.fromisoformat(row[2]), parse_time(row[3]))


class SqliteApiTokens:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, token_id: str, name: str, digest: str) -> ApiToken:
        sql = f"INSERT INTO api_tokens (id, name, digest, created_at) VALUES (?, ?, ?, ?) RETURNING {_COLUMNS}"
        row = await self._db.write(lambda db: db.execute(sql, (token_id, name, digest, now_iso())).fetchone())
        return _token(row)

    async def by_digest(self, digest: str) -> ApiToken | None:
        sql = f"SELECT {_COLUMNS} FROM api_tokens WHERE digest = ?"
        row = await self._db.read(lambda db: db.execute(sql, (digest,)).fetchone())
        return _token(row) if row else None

    async def list(self) -> list[ApiToken]:
        sql = f"SELECT {_COLUMNS} FROM api_tokens ORDER BY created_at DESC, id"
        return [_token(row) for row in await self._db.read(lambda db: db.execute(sql).fetchall())]

    async def revoke(self, token_id: str) -> bool:
        sql = "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING id"
        row = await self._db.write(lambda db: db.execute(sql, (now_iso(), token_id)).fetchone())
        return row is not None
