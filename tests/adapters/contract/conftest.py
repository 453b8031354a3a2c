"""Every contract test runs once per adapter folder, against that platform's real transport."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.adapters.contract.driver import Driver
from tests.adapters.contract.drivers import make_driver, platforms


@pytest.fixture(params=platforms())
async def driver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Driver]:
    running = make_driver(request.param, monkeypatch)
    await running.start()
    yield running
    await running.stop()
