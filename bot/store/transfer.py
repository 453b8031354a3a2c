"""`bothub migrate-store`: copy a SQLite store into an empty PostgreSQL one, table by table, in one
transaction, then check every table's count. Columns are matched by name and converted by the target's
type, so a column added to both backends later is carried without a change here."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg

from bot.store.memories import unpack
from bot.store.postgres import PostgresStore
from bot.store.postgres.database import json_codecs
from bot.store.sqlite import SqliteStore

TABLES = ("chats", "conversations", "messages", "seen_events", "memories", "pairing", "jobs", "inbox", "inbox_order",
          "audit_log", "traces", "api_tokens", "approval_rules", "fleet", "fleet_changes",  # fleet: credentials sealed
          "dashboard_accounts", "feedback")
IDENTITIES = (("messages", "seq"), ("memories", "id"), ("jobs", "id"), ("inbox", "id"), ("audit_log", "id"),
              ("traces", "seq"), ("approval_rules", "id"), ("fleet_changes", "id"))
_CONVERT: dict[str, Callable[[Any], Any]] = {
    "timestamp with time zone": datetime.fromisoformat,
    "boolean": bool,
    "json": json.loads,
    "jsonb": json.loads,
    "ARRAY": lambda v: unpack(v) if isinstance(v, bytes) else json.loads(v),  # embedding: float32s; tags: JSON
}


class TransferError(Exception):
    """Worded for the operator."""


def _converter(pg_type: str) -> Callable[[Any], Any]:
    convert = _CONVERT.get(pg_type)
    if convert is None:
        return lambda value: value
    return lambda value: None if value is None else convert(value)


async def copy_sqlite_to_postgres(sqlite_path: Path, url: str) -> dict[str, int]:
    """Copy everything; returns rows per table. The target must be empty (it is migrated first)."""
    if not await asyncio.to_thread(sqlite_path.exists):
        raise TransferError(f"no SQLite database at {sqlite_path}")
    try:
        return await _transfer(sqlite_path, url)
    except (OSError, sqlite3.Error, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
        raise TransferError(f"{type(e).__name__}: {e}") from e


async def _transfer(sqlite_path: Path, url: str) -> dict[str, int]:
    for store in (SqliteStore(sqlite_path), PostgresStore(url, pool_size=1)):  # both at the current schema
        await store.open()
        await store.close()
    with contextlib.closing(sqlite3.connect(sqlite_path)) as source:
        conn = await asyncpg.connect(url)
        try:
            await json_codecs(conn)
            async with conn.transaction():
                return await _copy(source, conn)
        finally:
            await conn.close()


async def _copy(source: sqlite3.Connection, conn: asyncpg.Connection) -> dict[str, int]:
    for table in TABLES:
        if await conn.fetchval(f"SELECT EXISTS (SELECT 1 FROM {table})"):
            raise TransferError(f"the target database already has {table}: migrate into an empty database")
    copied: dict[str, int] = {}
    for table in TABLES:
        types = dict(await conn.fetch("SELECT column_name, data_type FROM information_schema.columns "
                                      "WHERE table_schema = current_schema() AND table_name = $1", table))
        columns = [row[1] for row in source.execute(f"PRAGMA table_info({table})") if row[1] in types]
        converters = [_converter(types[c]) for c in columns]
        rows = [tuple(convert(v) for convert, v in zip(converters, row, strict=True))
                for row in source.execute(f"SELECT {', '.join(columns)} FROM {table}")]
        marks = ", ".join(f"${i}" for i in range(1, len(columns) + 1))
        await conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) OVERRIDING SYSTEM VALUE "
                               f"VALUES ({marks})", rows)
        copied[table] = len(rows)
    for table, column in IDENTITIES:  # new rows continue after the copied ids
        await conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                           f"COALESCE(MAX({column}), 0) + 1, false) FROM {table}")
    for table in TABLES:
        stored = await conn.fetchval(f"SELECT COUNT(*) FROM {table}")
        if stored != copied[table]:
            raise TransferError(f"{table}: copied {copied[table]} rows but the target holds {stored}")
    return copied
