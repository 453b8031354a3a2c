"""Fixtures: the fake DingTalk platform, and the real adapter built by `create()` against it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio

from adapters.dingtalk import DingTalkConfig
from adapters.dingtalk import adapter as dingtalk_adapter
from bot.adapter import WebHandler
from tests.adapters.contract.driver import Inbox, services
from tests.fakes.dingtalk_api import CLIENT_ID, CLIENT_SECRET, FakeDingTalk

ENV = {"DINGTALK_CLIENT_ID": CLIENT_ID, "DINGTALK_CLIENT_SECRET": CLIENT_SECRET}
Make = Callable[..., Any]


@pytest_asyncio.fixture
async def dingtalk() -> AsyncIterator[FakeDingTalk]:
    fake = FakeDingTalk()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def make(dingtalk: FakeDingTalk) -> AsyncIterator[Make]:
    """make(transport="stream", **env) → (adapter, inbox, routes), started; stopped afterwards."""
    started: list[dingtalk_adapter.DingTalkAdapter] = []

    async def build(transport: str = "stream", **env: str) -> tuple[Any, Inbox, list[tuple[str, str, WebHandler]]]:
        routes: list[tuple[str, str, WebHandler]] = []
        settings = DingTalkConfig(transport=transport, api_base=dingtalk.base, oapi_base=dingtalk.base)
        adapter = dingtalk_adapter.create(settings, {**ENV, **env}, services(routes))
        inbox = Inbox()
        await adapter.start(inbox)
        started.append(adapter)
        return adapter, inbox, routes

    yield build
    for adapter in started:
        await adapter.stop()
