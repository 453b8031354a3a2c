"""Our own tenant-token lifecycle: fetched and refreshed over aiohttp, never blocking the hub's loop."""

from __future__ import annotations

import asyncio
import urllib.request

import pytest

from adapters.feishu import FeishuConfig
from adapters.feishu.adapter import create
from adapters.feishu.transport import DOMAINS, TOKEN_PATH, ApiError, FeishuHttp, refused
from bot.adapter import AdapterServices
from bot.config import ConfigError
from bot.messages import ChatRef, IncomingMessage
from bot.replies import Reply
from tests.adapters.feishu.conftest import StartAdapter, env, eventually, no_conversations
from tests.fakes.feishu_api import FakeFeishu


def token_requests(fake: FakeFeishu) -> int:
    return len(fake.requests("POST", "tenant_access_token"))


async def test_token_fetch_and_refresh_never_block_the_loop(fake: FakeFeishu, start_adapter: StartAdapter) -> None:
    """The fake holds each token request; this test's own code runs meanwhile, so the loop is free.

    A blocking fetch would hold the loop inside the request, and the fake (on the same loop) could never
    even record it: the wait below would fail instead of a stall being measured in milliseconds.
    """
    fake.token_gate = asyncio.Event()
    starting = asyncio.create_task(start_adapter())  # webhook mode: no long-connection thread
    await eventually(lambda: token_requests(fake) == 1)
    assert not starting.done()
    fake.token_gate.set()
    h = await starting
    fake.token_gate.clear()
    fake.expire_tokens()  # the next call refreshes the token
    sending = asyncio.create_task(h.adapter.send(ChatRef("feishu", "oc_dm"), Reply("after refresh")))
    await eventually(lambda: token_requests(fake) == 2)
    assert not sending.done()
    fake.token_gate.set()
    await sending
    assert fake.calls[-1].headers["Authorization"] == f"Bearer {fake.issued_tokens[-1]}"


async def test_a_blocking_token_fetch_would_be_caught(
        fake: FakeFeishu, start_adapter: StartAdapter, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation: the fetch is a synchronous HTTP call on the event loop (lark-oapi's own client is one)."""
    async def blocking_fetch(self: FeishuHttp) -> float:
        request = urllib.request.Request(self.base_url + TOKEN_PATH, data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=0.5):  # noqa: ASYNC210 (the mutation under test)
            return 7200.0

    monkeypatch.setattr(FeishuHttp, "_fetch_token", blocking_fetch)
    fake.token_gate = asyncio.Event()
    starting = asyncio.create_task(start_adapter())
    await asyncio.wait({starting}, timeout=10)
    # the test above needs start-up still pending while the fake holds the request; here it has already
    # failed: the fake shares the loop the fetch blocked, so it could not even accept the request in time
    assert starting.done()
    with pytest.raises(ConnectionError, match="cannot reach Feishu"):
        starting.result()
    fake.token_gate.set()


async def test_token_is_refreshed_in_the_background_at_half_its_lifetime(
        fake: FakeFeishu, start_adapter: StartAdapter, monkeypatch: pytest.MonkeyPatch) -> None:
    waits: asyncio.Queue[float] = asyncio.Queue()
    wake = asyncio.Event()

    async def pause(seconds: float) -> None:  # the refresher's clock, advanced by this test
        await waits.put(seconds)
        await wake.wait()
        wake.clear()

    monkeypatch.setattr(FeishuHttp, "pause", staticmethod(pause))
    fake.token_expire = 7200
    h = await start_adapter()
    assert await waits.get() == 3600  # half the lifetime Feishu gave
    assert token_requests(fake) == 1
    wake.set()
    assert await waits.get() == 3600  # the next wait starts only after the refresh
    assert token_requests(fake) == 2
    await h.adapter.send(ChatRef("feishu", "oc_dm"), Reply("uses the fresh token"))
    assert fake.calls[-1].headers["Authorization"] == f"Bearer {fake.issued_tokens[-1]}"
    assert len(fake.issued_tokens) == 2


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


def test_a_refused_app_names_the_other_domain_before_blaming_the_secret() -> None:
    """Issue 12 §7: a Lark app on the Feishu domain (or the other way round) is refused like a bad secret."""
    error = ApiError(200, 10014, "app secret invalid")
    assert refused(DOMAINS["feishu"], error) == (
        "open.feishu.cn refused the app: app secret invalid (10014). If the app was created on open.larksuite.com, "
        "set FEISHU_DOMAIN=lark; otherwise check FEISHU_APP_ID / FEISHU_APP_SECRET and that the app has the Bot "
        "capability.")
    assert "set FEISHU_DOMAIN=feishu" in refused(DOMAINS["lark"], error)
