"""The embedded default backend: stdlib sqlite3 on one dedicated thread, WAL."""

from bot.store.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
