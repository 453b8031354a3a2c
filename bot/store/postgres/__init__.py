"""The backend for several replicas: PostgreSQL through asyncpg, the same Protocols as SQLite."""

from bot.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
