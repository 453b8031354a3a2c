"""Full-text search over every chat's messages, with snippets that link into the tree."""

from __future__ import annotations

from aiohttp import web

from bot.web.dashboard import DEPS, render_page

LIMIT = 50


async def search_page(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    query = request.query.get("q", "").strip()
    chat, platform = request.query.get("chat", "").strip(), request.query.get("platform", "").strip()
    hits = await deps.store.dashboard.search_messages(query, chat, platform, LIMIT) if query else []
    context = {"q": query, "chat": chat, "platform": platform, "hits": hits, "limit": LIMIT}
    return render_page("search.html", request, context)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/search", search_page)
