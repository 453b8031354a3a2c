"""Our own tenant-token lifecycle: fetched and refreshed over aiohttp, never blocking the hub's loop."""

from __future__ import annotations

import asyncio
import time

import pytest

from adapters.feishu import FeishuConfig
from adapters.feishu.adapter import create
from bot.adapter import AdapterServices
from bot.config import ConfigError
from bot.messages import ChatRef, IncomingMessage
from bot.replies import Reply
from tests.adapters.feishu.conftest import StartAdapter, env, no_conversations
from tests.fakes.feishu_api import FakeFeishu


async def ticker(gaps: list[float], stop: asyncio.Event) -> None:
    last = time.monotonic()
    while not stop.is_set():
        await asyncio.sleep(0.005)
        now = time.monotonic()
        gaps.append(now - last)
        last = now


async def test_token_fetch_and_refresh_never_block_the_loop(fake: FakeFeishu, start_adapter: StartAdapter) -> None:
    fake.token_delay = 0.5  # a slow token endpoint: a blocking fetch would freeze the loop this long
    gaps: list[float] = []
    stop = asyncio.Event()
    ticking = asyncio.create_task(ticker(gaps, stop))
    h = await start_adapter()  # webhook mode: no long-connection thread competing for the GIL
    fake.expire_tokens()  # the next call refreshes the token
    await h.adapter.send(ChatRef("feishu", "oc_dm"), Reply("after refresh"))
    stop.set()
    await ticking
    assert len(fake.requests("POST", "tenant_access_token")) == 2
    assert sum(gaps) > 0.9  # the ticker really ran across both slow fetches
    assert max(gaps) < 0.05, f"event loop blocked for {max(gaps) * 1000:.0f} ms"



async def test_token_is_refreshed_in_the_background_before_it_expires(
        fake: FakeFeishu, start_adapter: StartAdapter) -> None:
    fake.token_expire = 2  # refreshed at half its lifetime
    h = await start_adapter()
    await asyncio.sleep(1.3)
    assert len(fake.requests("POST", "tenant_access_token")) == 2
    await h.adapter.send(ChatRef("feishu", "oc_dm"), Reply("uses the fresh token"))
    assert len(fake.issued_tokens) == 2
    assert fake.calls[-1].headers["Authorization"] == f"Bearer {fake.issued_tokens[-1]}"


async def test_a_wrong_secret_is_a_clear_config_error(fake: FakeFeishu) -> None:
    services = AdapterServices(no_conversations, _never_seen, lambda *route: None)
    adapter = create(FeishuConfig(domain=fake.domain),
                     {**env(), "FEISHU_APP_SECRET": "wrong"}, services)
    with pytest.raises(ConfigError, match="FEISHU_APP_SECRET"):
        await adapter.start(_ignore)
    assert not adapter.connected()


async def _never_seen(key: str) -> bool:
    return False


async def _ignore(msg: IncomingMessage) -> None:
    return None
