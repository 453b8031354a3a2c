"""Stores for the contract suite: every test in tests/store/contract/ runs once per backend, each on a
fresh database (a file for SQLite, a new database on the test PostgreSQL server)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.store import Store
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from tests.postgres import PostgresServer

StoreFactory = Callable[..., Store]  # (clock=...) -> an unopened store on this test's database


@pytest.fixture(params=["sqlite", "postgres"])
async def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreFactory]:
    if request.param == "sqlite":
        def sqlite(clock: Callable[[], float] = time.time) -> Store:
            return SqliteStore(tmp_path / "data" / "bothub.sqlite3", clock)

        yield sqlite
        return
    server: PostgresServer = request.getfixturevalue("postgres")
    url = await server.new_database()

    def postgres(clock: Callable[[], float] = time.time) -> Store:
        return PostgresStore(url, clock=clock)

    yield postgres
    await server.drop_database(url)


@pytest.fixture
async def store(new_store: StoreFactory) -> AsyncIterator[Store]:
    s = new_store()
    await s.open()
    yield s
    await s.close()
