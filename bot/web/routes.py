"""Mounts the dashboard on the hub's aiohttp server: middleware, static files, pages, JSON API."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from bot.httpkit import lang
from bot.httpkit.auth import Auth
from bot.httpkit.security import AUTH, security
from bot.web import (
    accounts,
    admin,
    agents,
    api,
    chats,
    identities,
    login,
    logs,
    overview,
    replays,
    roles,
    search,
    usage,
)
from bot.web.dashboard import DEPS, Deps

STATIC = Path(__file__).parent / "static"


def mount(app: web.Application, deps: Deps, auth: Auth) -> None:
    """Call before the server starts (the middleware list freezes then)."""
    app.middlewares.append(security)
    app.middlewares.append(roles.scoped)  # after sign-in: an account reaches only its agents' part
    app[AUTH] = auth
    app[DEPS] = deps
    app.router.add_static("/static/", STATIC, name="static")
    for module in (login, chats, replays, search, overview, usage, admin, agents, identities, accounts, api, logs):
        module.add_routes(app)
    app.router.add_get("/lang", lang.switch)
