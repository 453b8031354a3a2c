"""Pick the backend a database URL names: `sqlite:///data/bothub.sqlite3` (a relative path; four slashes
for an absolute one) or `postgresql://user@host/db`. The PostgreSQL backend (asyncpg) is imported only
when it is named."""

from __future__ import annotations

from pathlib import Path

from bot.store import Store
from bot.store.sqlite import SqliteStore

SQLITE = "sqlite:///"
POSTGRES = ("postgresql://", "postgres://")


def sqlite_path(url: str) -> Path | None:
    """The database file a sqlite URL names; None for any other backend."""
    return Path(url[len(SQLITE):]) if url.startswith(SQLITE) else None


def store_for_url(url: str, pool_size: int = 10, replica: str | None = None, guest: bool = False) -> Store:
    """`guest`: a process beside the replicas, not one of them (bot/replicas/share.py)."""
    path = sqlite_path(url)
    if path is not None:
        return SqliteStore(path)
    if url.startswith(POSTGRES):
        from bot.store.postgres import PostgresStore

        return PostgresStore(url, pool_size, replica=replica, guest=guest)
    raise ValueError("the database URL must start with sqlite:/// or postgresql://")  # never echo it: a password
