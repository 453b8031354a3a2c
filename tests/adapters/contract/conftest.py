"""Every contract test runs once per platform, against that platform's fake server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.adapters.contract.drivers import PLATFORMS, Driver, make_driver


@pytest.fixture(params=PLATFORMS)
async def driver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Driver]:
    running = make_driver(request.param, monkeypatch)
    await running.start()
    yield running
    await running.stop()
