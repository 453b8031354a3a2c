"""Friction 3, the model client: HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY through a real proxy on 127.0.0.1.

https goes through a CONNECT tunnel with TLS to the model inside it (the fake serves real TLS with a certificate
the client trusts by SSL_CERT_FILE); http goes to the proxy with the absolute URI; credentials in the proxy URL
become Proxy-Authorization."""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.agent.llm import LLMClient
from bot.agent.provider import LLMError, Provider
from bot.config import ConfigError, LLMConfig
from tests.fakes.openai_api import API_KEY, MODEL, FakeOpenAI
from tests.fakes.proxy import FakeProxy, Visit
from tests.fakes.tls import self_signed


@pytest_asyncio.fixture
async def proxy() -> AsyncIterator[FakeProxy]:
    server = FakeProxy()
    await server.start()
    yield server
    await server.stop()


@pytest_asyncio.fixture
async def tls_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeOpenAI]:
    context, cert = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client's default trust store: this certificate
    server = FakeOpenAI()
    await server.start(tls=context)
    yield server
    await server.stop()


async def test_https_goes_through_a_connect_tunnel(tls_model: FakeOpenAI, proxy: FakeProxy) -> None:
    llm = LLMClient(LLMConfig(base_url=tls_model.base_url, api_key=API_KEY, max_retries=0),
                    env={"https_proxy": proxy.url})
    try:
        answer = await llm.complete([{"role": "user", "content": "through the tunnel"}], MODEL)
        again = await llm.complete([{"role": "user", "content": "and again"}], MODEL)
    finally:
        await llm.close()
    assert (answer, again) == ("through the tunnel", "and again")
    assert proxy.visits == [Visit("CONNECT", f"127.0.0.1:{tls_model.port}", None)]  # kept alive: one tunnel


async def test_plain_http_asks_the_proxy_for_the_absolute_uri_with_credentials(fake: FakeOpenAI) -> None:
    proxy = FakeProxy(credentials="Basic " + base64.b64encode(b"me:s3cret").decode())
    await proxy.start()
    provider = Provider(fake.base_url, API_KEY, timeout=10, max_retries=0,
                        env={"HTTP_PROXY": f"http://me:s3cret@127.0.0.1:{proxy.port}"})
    try:
        models = await provider.get_json("/models")
    finally:
        await provider.close()
        await proxy.stop()
    assert models["data"][0]["id"] == MODEL
    assert proxy.targets() == [f"{fake.base_url}/models"] and proxy.visits[0].authorization == proxy.credentials


async def test_a_proxy_wanting_credentials_is_a_connection_failure(tls_model: FakeOpenAI) -> None:
    proxy = FakeProxy(credentials="Basic bm9ib2R5Om5vdGhpbmc=")
    await proxy.start()
    provider = Provider(tls_model.base_url, API_KEY, timeout=10, max_retries=0, env={"ALL_PROXY": proxy.url})
    try:
        with pytest.raises(LLMError) as failed:
            await provider.get_json("/models")
    finally:
        await provider.close()
        await proxy.stop()
    assert failed.value.kind == "connection" and "407" in failed.value.detail
    assert tls_model.requests == []


async def test_no_proxy_hosts_connect_directly(fake: FakeOpenAI, proxy: FakeProxy) -> None:
    provider = Provider(fake.base_url, API_KEY, timeout=10, max_retries=0,
                        env={"HTTP_PROXY": proxy.url, "NO_PROXY": "example.org,127.0.0.1"})
    try:
        await provider.get_json("/models")
    finally:
        await provider.close()
    assert proxy.visits == []


def test_a_socks_proxy_for_the_model_is_a_clear_configuration_error() -> None:
    with pytest.raises(ConfigError, match=re.escape("must be an http:// proxy, not 'socks5://127.0.0.1:1080'")):
        Provider("https://api.example.org/v1", "k", timeout=10, max_retries=0,
                 env={"ALL_PROXY": "socks5://me:pw@127.0.0.1:1080"})
