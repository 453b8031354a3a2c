"""Fixtures for the dashboard: the real app with its web server on 127.0.0.1, and a real Chromium."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from bot.app import App
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, make_config, running_app
from tests.web.browser import Browser, chromium

PASSWORD = "correct horse battery staple"


@dataclass
class Dashboard:
    app: App
    base: str

    def url(self, path: str) -> str:
        return self.base + path


@asynccontextmanager
async def serving(tmp_path: Path, fake: FakeOpenAI, platforms: tuple[str, ...] = (),
                  adapters: tuple[Any, ...] = (), config: dict[str, Any] | None = None,
                  env: dict[str, str] | None = None) -> AsyncIterator[Dashboard]:
    """The app with its web server on 127.0.0.1 (signed in with PASSWORD) and the given adapters."""
    config = {**(config or {}), "server": {"enabled": True, "port": 0}}
    async with running_app(tmp_path, fake.base_url, platforms, config=config,
                           env={"BOTHUB_ADMIN_PASSWORD": PASSWORD, **(env or {})}, adapters=adapters) as app:
        yield Dashboard(app, f"http://127.0.0.1:{app.web_port}")


@pytest_asyncio.fixture
async def dashboard(tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[Dashboard]:
    async with serving(tmp_path, fake) as hub:
        yield hub


@pytest_asyncio.fixture
async def chatting(tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[Dashboard]:
    """The dashboard with an in-memory platform to chat on (`recording(dashboard)`)."""
    async with serving(tmp_path, fake, adapters=(RecordingAdapter(),)) as hub:
        yield hub


def recording(dashboard: Dashboard) -> RecordingAdapter:
    chat = dashboard.app.adapters[0]
    assert isinstance(chat, RecordingAdapter)
    return chat


@pytest_asyncio.fixture
async def webchat(tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[Dashboard]:
    """The dashboard with the web chat adapter running."""
    async with serving(tmp_path, fake, ("web",)) as hub:
        yield hub


@pytest_asyncio.fixture
async def with_api(tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[Dashboard]:
    """The dashboard with the HTTP API adapter running."""
    async with serving(tmp_path, fake, ("api",)) as hub:
        yield hub


@pytest_asyncio.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    async with chromium(tmp_path) as b:
        yield b


@pytest_asyncio.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    """A plain HTTP client that keeps cookies for 127.0.0.1 (aiohttp refuses IP cookies by default)."""
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        yield session


async def sign_in(browser: Browser, dashboard: Dashboard, password: str = PASSWORD) -> None:
    await browser.page.goto(dashboard.url("/login"))
    await browser.page.fill("input[name=password]", password)
    await browser.page.click("form.login button[type=submit]")


@pytest.fixture
def api_routes(tmp_path: Path) -> list[tuple[str, str]]:
    """(method, path) of every /api/v1/ route the server mounts: the dashboard's and the HTTP API adapter's."""
    cfg, env = make_config(tmp_path, "http://127.0.0.1:9/v1")
    app = App(cfg, env, platforms=("api",))
    return [(r.method, r.resource.canonical) for r in app.web.router.routes()
            if r.resource is not None and r.resource.canonical.startswith("/api/v1/") and r.method != "HEAD"]
