"""Fixtures: the fake WeCom long connection, and the real adapter built by `create()` against it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio

from adapters.wecom import WeComConfig, longconn
from adapters.wecom import adapter as wecom_adapter
from bot.adapter import WebHandler
from tests.adapters.contract.driver import Inbox, services
from tests.fakes.wecom_rules import BOT_ID, SECRET
from tests.fakes.wecom_ws import FakeWeCom

ENV = {"WECOM_BOT_ID": BOT_ID, "WECOM_BOT_SECRET": SECRET}
Make = Callable[..., Any]


@pytest_asyncio.fixture
async def wecom(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeWeCom]:
    monkeypatch.setattr(longconn.LongConnection, "pause", staticmethod(lambda s: asyncio.sleep(s if s < 1 else 0.01)))
    fake = FakeWeCom()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def make(wecom: FakeWeCom) -> AsyncIterator[Make]:
    """make(**settings) → (adapter, inbox, routes), started; stopped afterwards."""
    started: list[wecom_adapter.WeComAdapter] = []

    async def build(env: dict[str, str] | None = None, **settings: Any) -> tuple[Any, Inbox, list[Any]]:
        routes: list[tuple[str, str, WebHandler]] = []
        config = WeComConfig(ws_url=wecom.url, **settings)
        adapter = wecom_adapter.create(config, {**ENV, **(env or {})}, services(routes))
        inbox = Inbox()
        await adapter.start(inbox)
        started.append(adapter)
        return adapter, inbox, routes

    yield build
    for adapter in started:
        await adapter.stop()


def text(msgid: str, content: str, *, user: str = "lisi", group: str = "") -> dict[str, Any]:
    body: dict[str, Any] = {"msgid": msgid, "aibotid": BOT_ID, "chattype": "group" if group else "single",
                            "from": {"userid": user}, "msgtype": "text", "text": {"content": content}}
    if group:
        body["chatid"] = group
    return body
