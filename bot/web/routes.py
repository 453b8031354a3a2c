"""Mounts the dashboard on the hub's aiohttp server: middleware, templates, static files, pages, JSON API."""

from __future__ import annotations

from pathlib import Path

import aiohttp_jinja2
import jinja2
from aiohttp import web

from bot.web import admin, api, chats, login, overview, render, search
from bot.web.auth import Auth
from bot.web.dashboard import DEPS, Deps, url
from bot.web.security import AUTH, security

STATIC = Path(__file__).parent / "static"


def mount(app: web.Application, deps: Deps, password: str | None) -> None:
    """Call before the server starts (the middleware list freezes then)."""
    app.middlewares.append(security)
    app[AUTH] = Auth(password)
    app[DEPS] = deps
    env = aiohttp_jinja2.setup(
        app, loader=jinja2.PackageLoader("bot.web", "templates"), autoescape=True, undefined=jinja2.StrictUndefined,
    )
    env.globals.update(url=url, markdown=render.markdown, role_label=render.role_label)
    env.filters["timestamp"] = render.timestamp
    app.router.add_static("/static/", STATIC, name="static")
    for module in (login, chats, search, overview, admin, api):
        module.add_routes(app)
