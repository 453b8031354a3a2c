"""A migrated database of its own for each store-level replica test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.store.postgres import PostgresStore
from tests.postgres import PostgresServer


@pytest.fixture
async def url(postgres: PostgresServer) -> AsyncIterator[str]:
    url = await postgres.new_database()
    store = PostgresStore(url)
    await store.open()  # migrations: the inbox and its NOTIFY trigger, the heartbeats' table
    yield url
    await store.close()
