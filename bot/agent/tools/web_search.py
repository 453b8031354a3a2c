"""`web_search(query)`: the web's answer to a question, as numbered results the model cites as links.

The engine is the operator's choice (`tools.web_search_backend`): SearXNG's JSON API (self-hosted, no key — the
suggestion), Brave Search (`BRAVE_API_KEY`) or Tavily (`TAVILY_API_KEY`). Its address comes from config, never from
the model, so it is not judged by the SSRF guard (a SearXNG on the same host is normal); what the model fetches
from a result goes through `web_fetch` and its guard. Snippets are the web's words: they come back marked as
untrusted, like a fetched page. Each chat has its own budget of searches per minute, so one chat cannot spend
the deployment's engine quota.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from yarl import URL

from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.agent.tools.web import UNTRUSTED_END, UNTRUSTED_START, Proxies, direct, html_to_text

TIMEOUT = 15.0  # seconds for one search
MAX_QUERY = 400  # characters sent to the engine
MAX_SNIPPET = 400  # characters of one result's snippet
_IDLE_CHATS = 4096  # chats remembered by the per-minute budget before idle ones are dropped


@dataclass(frozen=True)
class Result:
    title: str
    url: str
    snippet: str


class SearchFailed(Exception):
    """The engine said no; the message is for the model (and so for the user)."""


@dataclass(frozen=True)
class Engine:
    """One backend: its default address, the env variable of its key, and how to ask it."""

    name: str
    default_url: str
    key_env: str | None
    ask: Callable[[aiohttp.ClientSession, URL, str | None, str, int, str | None], Awaitable[Any]]
    results: Callable[[Any], list[dict[str, Any]]]
    snippet_field: str


async def _json(resp: aiohttp.ClientResponse, engine: str) -> Any:
    if resp.status == 429:
        raise SearchFailed(f"{engine} is rate-limiting searches right now; try again in a minute")
    if resp.status in (401, 403):
        hint = " (is JSON output enabled in its settings.yml `search.formats`?)" if engine == "SearXNG" else \
            " (check its API key)"
        raise SearchFailed(f"{engine} refused the search with HTTP {resp.status}{hint}")
    if resp.status >= 400:
        raise SearchFailed(f"{engine} answered HTTP {resp.status}")
    try:
        return await resp.json(content_type=None)
    except ValueError:
        raise SearchFailed(f"{engine} did not answer in JSON") from None


async def _searxng(session: aiohttp.ClientSession, base: URL, key: str | None, query: str, count: int,
                   proxy: str | None) -> Any:
    params = {"q": query, "format": "json", "safesearch": "1"}
    async with session.get(base / "search", params=params, proxy=proxy) as resp:
        return await _json(resp, "SearXNG")


async def _brave(session: aiohttp.ClientSession, base: URL, key: str | None, query: str, count: int,
                 proxy: str | None) -> Any:
    headers = {"X-Subscription-Token": key or "", "Accept": "application/json"}
    async with session.get(base / "res/v1/web/search", params={"q": query, "count": str(count)},
                           headers=headers, proxy=proxy) as resp:
        return await _json(resp, "Brave Search")


async def _tavily(session: aiohttp.ClientSession, base: URL, key: str | None, query: str, count: int,
                  proxy: str | None) -> Any:
    body = {"query": query, "max_results": count, "search_depth": "basic"}
    async with session.post(base / "search", json=body, headers={"Authorization": f"Bearer {key}"},
                            proxy=proxy) as resp:
        return await _json(resp, "Tavily")


def _listed(data: Any, *path: str) -> list[dict[str, Any]]:
    for step in path:
        data = data.get(step) if isinstance(data, dict) else None
    return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []


ENGINES = {
    "searxng": Engine("SearXNG", "", None, _searxng, lambda d: _listed(d, "results"), "content"),
    "brave": Engine("Brave Search", "https://api.search.brave.com", "BRAVE_API_KEY", _brave,
                    lambda d: _listed(d, "web", "results"), "description"),
    "tavily": Engine("Tavily", "https://api.tavily.com", "TAVILY_API_KEY", _tavily,
                     lambda d: _listed(d, "results"), "content"),
}


def _plain(text: object, limit: int) -> str:
    """Engines put <strong> and entities in titles and snippets: plain text, one line, cut."""
    words = " ".join(html_to_text(str(text or ""))[1].split())
    return words if len(words) <= limit else words[:limit].rstrip() + "…"


def _results(engine: Engine, data: Any, count: int) -> list[Result]:
    found = []
    for item in engine.results(data):
        url = str(item.get("url") or "")
        if URL(url).scheme in ("http", "https"):
            found.append(Result(_plain(item.get("title"), 200) or url, url,
                                _plain(item.get(engine.snippet_field), MAX_SNIPPET)))
    return found[:count]


def render(query: str, results: list[Result]) -> str:
    if not results:
        return f"No results for {query!r}."
    lines = [UNTRUSTED_START]
    for n, result in enumerate(results, 1):
        lines += [f"{n}. {result.title} — {URL(result.url).host}", f"   {result.url}"]
        lines += [f"   {result.snippet}"] if result.snippet else []
    lines += [UNTRUSTED_END, "Cite the results you use as Markdown links, e.g. [title](url)."]
    return "\n".join(lines)


class PerMinute:
    """At most `limit` searches per chat in any 60 s; idle chats are forgotten so memory stays bounded."""

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.clock = limit, clock
        self.recent: dict[str, deque[float]] = {}

    def wait(self, chat: str) -> float:
        """0 when a search may go now (and counts it), else the seconds until one may."""
        now = self.clock()
        if len(self.recent) > _IDLE_CHATS:
            self.recent = {c: q for c, q in self.recent.items() if q and now - q[-1] < 60}
        times = self.recent.setdefault(chat, deque())
        while times and now - times[0] >= 60:
            times.popleft()
        if len(times) >= self.limit:
            return 60 - (now - times[0])
        times.append(now)
        return 0.0


async def search(engine: Engine, base: URL, key: str | None, query: str, count: int, proxy_for: Proxies) -> str:
    proxy = proxy_for(str(base))
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT),
                                         headers={"User-Agent": "bothub-web-search/0.1"}) as session:
            data = await engine.ask(session, base, key, query[:MAX_QUERY], count, proxy)
    except SearchFailed as e:
        return f"Error: {e}."
    except TimeoutError:
        return f"Error: {engine.name} took longer than {TIMEOUT:g} s."
    except (aiohttp.ClientError, OSError) as e:
        return f"Error: could not reach {engine.name}: {type(e).__name__}."
    return render(query, _results(engine, data, count))


async def probe(backend: str, url: str, env: Mapping[str, str], proxy_for: Proxies = direct) -> tuple[bool, str]:
    """For doctor: (works, what was found or why not), by one real search through the configured engine."""
    engine = ENGINES[backend]
    base, key = URL(url or engine.default_url), env.get(engine.key_env) if engine.key_env else None
    if engine.key_env and not key:
        return False, f"{engine.name}: {engine.key_env} is not set"
    answer = await search(engine, base, key, "bothub", 3, proxy_for)
    if answer.startswith("Error: "):
        return False, answer.removeprefix("Error: ").rstrip(".")
    return True, f"{engine.name} at {base}"


def register(registry: ToolRegistry, backend: str, url: str, results: int, per_minute: int,
             env: Mapping[str, str], proxy_for: Proxies = direct) -> None:
    """Config has checked `backend`; a missing key or SearXNG address is the operator's to fix (doctor says so)."""
    engine = ENGINES[backend]
    base = URL(url or engine.default_url)
    key = env.get(engine.key_env) if engine.key_env else None
    budget = PerMinute(per_minute)

    async def web_search(ctx: ToolContext, query: str) -> str:
        if not isinstance(query, str) or not query.strip():
            return "Error: give the words to search for."
        if engine.key_env and not key:
            return f"Error: web search is not set up: {engine.key_env} is missing; the operator can set it."
        if (wait := budget.wait(ctx.chat)) > 0:
            return f"Error: this chat has used its {per_minute} searches per minute; the next one in {wait:.0f} s."
        return await search(engine, base, key, query.strip(), results, proxy_for)

    registry.register(
        "web_search",
        f"Search the web ({engine.name}). Returns numbered results with title, URL and snippet; cite the ones "
        "you use as Markdown links. Use web_fetch to read a result in full.",
        {"type": "object", "properties": {"query": {"type": "string", "description": "What to search for"}},
         "required": ["query"]},
        web_search,
    )
