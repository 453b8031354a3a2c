"""Fake web-search engines on 127.0.0.1, each on its own wire: SearXNG's JSON API, Brave Search's and Tavily's.

Strict where the real ones are: SearXNG refuses `format=json` with 403 unless JSON output is enabled; Brave needs
`X-Subscription-Token`, refuses a `count` above 20 (422) and allows one request per second (429 with
`X-RateLimit-Reset`); Tavily needs `Authorization: Bearer <key>` (401) and a `query` (400). Every call is recorded.
Results carry the engines' own markup (Brave's <strong>, entities) so the tool's cleaning is exercised.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.serve import serve_local

KEY = "test-search-key"


@dataclass
class Hit:
    title: str
    url: str
    snippet: str


@dataclass
class Call:
    engine: str
    query: str
    at: float
    status: int


DEFAULT_HITS = [
    Hit("Python <strong>asyncio</strong> &mdash; docs", "https://docs.example.org/asyncio.html",
        "asyncio is a library to write <strong>concurrent</strong> code using async/await."),
    Hit("Event loops explained", "https://blog.example.net/loops", "How an event loop schedules callbacks."),
    Hit("Not a web page", "ftp://files.example.com/x", "an ftp result is dropped"),
]


@dataclass
class FakeSearch:
    hits: list[Hit] = field(default_factory=lambda: list(DEFAULT_HITS))
    searxng_json: bool = True  # settings.yml search.formats includes json
    brave_per_second: int = 1
    calls: list[Call] = field(default_factory=list)
    port: int = 0
    _runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/search", self._searxng)
        app.router.add_get("/res/v1/web/search", self._brave)
        app.router.add_post("/search", self._tavily)
        self._runner, self.port = await serve_local(app)

    async def stop(self) -> None:
        if self._runner:
            await self._runner.cleanup()

    def _record(self, engine: str, query: str, status: int) -> None:
        self.calls.append(Call(engine, query, time.monotonic(), status))

    async def _searxng(self, request: web.Request) -> web.Response:
        query = request.query.get("q", "")
        if request.query.get("format") != "json" or not self.searxng_json:
            self._record("searxng", query, 403)
            return web.Response(status=403, text="403 Forbidden")
        self._record("searxng", query, 200)
        results = [{"title": h.title, "url": h.url, "content": h.snippet, "engine": "fake"} for h in self.hits]
        return web.json_response({"query": query, "number_of_results": len(results), "results": results})

    async def _brave(self, request: web.Request) -> web.Response:
        query, status = request.query.get("q", ""), self._brave_status(request)
        self._record("brave", query, status)
        if status == 429:
            return web.json_response({"type": "ErrorResponse", "error": {"code": "RATE_LIMITED"}}, status=429,
                                     headers={"X-RateLimit-Reset": "1"})
        if status != 200:
            return web.json_response({"type": "ErrorResponse", "error": {"status": status}}, status=status)
        count = int(request.query.get("count", "20"))
        results = [{"title": h.title, "url": h.url, "description": h.snippet} for h in self.hits[:count]]
        return web.json_response({"type": "search", "query": {"original": query}, "web": {"results": results}})

    def _brave_status(self, request: web.Request) -> int:
        if request.headers.get("X-Subscription-Token") != KEY:
            return 401
        if not request.query.get("q") or not request.query.get("count", "1").isdigit() \
                or int(request.query.get("count", "1")) > 20:
            return 422
        now = time.monotonic()
        if sum(1 for c in self.calls if c.engine == "brave" and c.status == 200 and now - c.at < 1.0) \
                >= self.brave_per_second:
            return 429
        return 200

    async def _tavily(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await request.json()
        query = str(body.get("query") or "")
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            self._record("tavily", query, 401)
            return web.json_response({"detail": {"error": "Unauthorized: missing or invalid API key."}}, status=401)
        if not query:
            self._record("tavily", query, 400)
            return web.json_response({"detail": {"error": "query is required"}}, status=400)
        self._record("tavily", query, 200)
        results = [{"title": h.title, "url": h.url, "content": h.snippet, "score": 0.9}
                   for h in self.hits[:int(body.get("max_results", 5))]]
        return web.json_response({"query": query, "results": results, "response_time": 0.1})


@asynccontextmanager
async def running() -> AsyncIterator[FakeSearch]:
    fake = FakeSearch()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()
