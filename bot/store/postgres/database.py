"""The connection pool shared by the PostgreSQL concern stores. asyncpg makes a pool on the running loop,
so it is made in `open`; the stores are built before that and reach it through `pool`."""

from __future__ import annotations

import json

import asyncpg

from bot.store.postgres.migrations import migrate


async def json_codecs(conn: asyncpg.Connection) -> None:
    """JSON columns in and out as Python values."""
    for kind in ("json", "jsonb"):
        await conn.set_type_codec(kind, schema="pg_catalog", encoder=lambda v: json.dumps(v, ensure_ascii=False),
                                  decoder=json.loads)


async def keep_session(conn: asyncpg.Connection) -> None:
    """A pooled connection goes back as it is. The stores leave no session state on one (no session-level
    advisory lock, LISTEN, SET or open cursor; a transaction always ends), so asyncpg's default reset query
    would be one more round trip after every operation for nothing. Session state needs its own connection."""


class Database:
    def __init__(self, url: str, pool_size: int) -> None:
        self.url = url
        self._pool_size = pool_size
        self._pool: asyncpg.Pool | None = None
        self.backends: set[int] = set()  # server process ids of the pool's connections (their NOTIFYs are ours)

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise RuntimeError("store is not open")
        return self._pool

    async def open(self) -> None:
        """Connect, then run the migrations this database has not seen (under an advisory lock)."""
        pool = await asyncpg.create_pool(self.url, min_size=1, max_size=self._pool_size, init=self._setup,
                                         reset=keep_session)
        try:
            async with pool.acquire() as conn:
                await migrate(conn)
        except BaseException:
            await pool.close()
            raise
        self._pool = pool

    async def _setup(self, conn: asyncpg.Connection) -> None:
        await json_codecs(conn)
        self.backends.add(conn.get_server_pid())

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
