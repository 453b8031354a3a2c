"""Fixtures the end-to-end tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from tests.fakes.telegram_api import FakeTelegram


@pytest_asyncio.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    """A fake Bot API, started; `tg.env` points a bothub at it."""
    server = FakeTelegram()
    await server.start()
    yield server
    await server.stop()
