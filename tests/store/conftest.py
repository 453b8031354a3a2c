"""Stores for the contract suite: every test in tests/store/contract/ runs once per backend."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.store import Store
from bot.store.sqlite import SqliteStore

StoreFactory = Callable[..., Store]  # (clock=...) -> an unopened store on this test's database
BACKENDS = ["sqlite"]


@pytest.fixture(params=BACKENDS)
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    def sqlite(clock: Callable[[], float] = time.time) -> Store:
        return SqliteStore(tmp_path / "data" / "bothub.sqlite3", clock)

    factories: dict[str, StoreFactory] = {"sqlite": sqlite}
    return factories[request.param]


@pytest.fixture
async def store(new_store: StoreFactory) -> AsyncIterator[Store]:
    s = new_store()
    await s.open()
    yield s
    await s.close()
