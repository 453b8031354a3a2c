"""The whole hub with the HTTP API adapter on its own aiohttp server, a fake LLM, and a plain HTTP client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest_asyncio
from aiohttp import web

from bot.app import App
from bot.chats.api_tokens import ApiTokens
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.serve import serve_local
from tests.harness import running_app

API_CONFIG = {"burst": 50, "callback_allow_hosts": ["127.0.0.1"], "callback_backoff": 0.05,
              "callback_timeout": 2.0, "callback_attempts": 3}


@dataclass
class Api:
    app: App
    http: aiohttp.ClientSession
    base: str
    token: str = ""

    async def new_token(self, name: str = "tests") -> tuple[str, str]:
        """(token id, secret)"""
        made, secret = await ApiTokens(self.app.store.api_tokens, self.app.store.dashboard).create(name, "tests")
        return made.id, secret

    async def post(self, key: str, body: Any, token: str | None = None, **kwargs: Any) -> aiohttp.ClientResponse:
        headers = {"Authorization": f"Bearer {token if token is not None else self.token}", **kwargs.pop("headers", {})}
        data = None if isinstance(body, dict | list | int) else body  # bytes, text or an async generator
        return await self.http.post(f"{self.base}/api/v1/chat/{key}/messages", headers=headers, data=data,
                                    json=None if data is not None else body, **kwargs)

    async def say(self, key: str, text: str, token: str | None = None) -> dict[str, Any]:
        async with await self.post(key, {"text": text}, token) as resp:
            assert resp.status == 200, await resp.text()
            result: dict[str, Any] = await resp.json()
            return result


async def sse_events(resp: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, Any]]:
    """(event name, data) of each server-sent event in a streamed answer."""
    event = ""
    async for raw in resp.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield event, json.loads(line[6:])


async def start_api(tmp_path: Path, fake: FakeOpenAI, **settings: Any) -> AsyncIterator[Api]:
    config = {"server": {"enabled": True, "port": 0}, "api": {**API_CONFIG, **settings}}
    # a dashboard password is set: the API's routes must not need its sign-in or CSRF token
    async with running_app(tmp_path, fake.base_url, ("api",), config=config,
                           env={"BOTHUB_ADMIN_PASSWORD": "dashboard-password"}) as app, aiohttp.ClientSession() as http:
        api = Api(app, http, f"http://127.0.0.1:{app.web_port}")
        api.token = (await api.new_token())[1]
        yield api


@pytest_asyncio.fixture
async def api(tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[Api]:
    async for running in start_api(tmp_path, fake):
        yield running


@dataclass
class Receiver:
    """A small 127.0.0.1 server taking callbacks: scripted statuses first, then 200."""

    url: str = ""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    signatures: list[tuple[str, bytes]] = field(default_factory=list)  # (X-Bothub-Signature, raw body)
    attempts: int = 0
    statuses: list[int] = field(default_factory=list)  # answered to the first attempts, in order
    stall: float = 0.0  # seconds the first attempt hangs before answering
    arrived: asyncio.Event = field(default_factory=asyncio.Event)


@pytest_asyncio.fixture
async def receiver() -> AsyncIterator[Receiver]:
    state = Receiver()

    async def take(request: web.Request) -> web.Response:
        state.attempts += 1
        if state.attempts == 1 and state.stall:
            await asyncio.sleep(state.stall)
        if state.statuses:
            return web.Response(status=state.statuses.pop(0))
        state.bodies.append(await request.json())
        state.signatures.append((request.headers.get("X-Bothub-Signature", ""), await request.read()))
        state.arrived.set()
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", take)
    runner, port = await serve_local(app, handler_cancellation=True)
    state.url = f"http://127.0.0.1:{port}/hook"
    yield state
    await runner.cleanup()
