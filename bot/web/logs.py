"""The log view: the newest lines of this process's log, filtered by level, following as it grows."""

from __future__ import annotations

from aiohttp import web

from bot.ops.logring import LEVELS
from bot.web.dashboard import DEPS, render_page

SHOWN = 500


async def logs_page(request: web.Request) -> web.Response:
    level = request.query.get("level", "INFO")
    level = level if level in LEVELS else "INFO"
    lines = request.app[DEPS].logs.tail(level, SHOWN)
    template = "_logs.html" if request.query.get("part") == "lines" else "logs.html"
    return render_page(template, request, {"lines": lines, "level": level, "levels": LEVELS})


def add_routes(app: web.Application) -> None:
    app.router.add_get("/logs", logs_page)
