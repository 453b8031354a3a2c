"""What every dashboard page shares: its dependencies, links, chat keys, rendering with the common context."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from aiohttp import web

from bot.chats.sessions import SessionKey
from bot.commands.services import CommandServices
from bot.config import Config
from bot.httpkit import lang
from bot.httpkit.markdown import markdown
from bot.httpkit.security import AUTH, SESSION
from bot.i18n import t
from bot.live.console import FleetConsole
from bot.ops.health import Health
from bot.ops.logring import LogRing
from bot.ops.metrics import Metrics
from bot.store import Store
from bot.web import render
from bot.web.treeview import IndexCache

if TYPE_CHECKING:
    import jinja2


@dataclass(frozen=True)
class Deps:
    cfg: Config
    store: Store
    services: CommandServices  # the same conversations, sessions and prompts the chat commands use
    health: Health
    metrics: Metrics
    fleet: FleetConsole  # agents, identities and bindings
    logs: LogRing = field(default_factory=LogRing)  # the last log lines, for the log view
    trees: IndexCache = field(default_factory=IndexCache)  # big trees' indexes, while unchanged


DEPS = web.AppKey("dashboard_deps", Deps)


def chat_key(storage_key: str) -> SessionKey:
    """The SessionKey behind a storage key "platform:chat_id[#thread]" (the inverse of `storage_key`)."""
    try:
        return SessionKey.parse(storage_key)
    except ValueError:
        raise web.HTTPNotFound(text="no such chat") from None


def url(path: str, **params: Any) -> str:
    """A dashboard link with its query string (chat keys carry ':' and '#', so they always go there)."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return f"{path}?{query}" if query else path


def render_page(name: str, request: web.Request, context: dict[str, Any], status: int = 200) -> web.Response:
    """Render a template with what every page shows: the CSRF token, sign-in state, the current path."""
    session, language = request.get(SESSION), lang.pick(request)
    common = {"csrf": session.csrf if session else "", "signed_in": session is not None,
              "who": session.who if session else None,
              "sign_in_mode": request.app[AUTH].mode, "path": request.path, "path_qs": request.path_qs,
              "webchat": any(r.canonical == "/webchat" for r in request.app.router.resources()),
              "lang": language, "t": functools.partial(t, language),
              "role_label": functools.partial(render.role_label, language)}
    html = _pages().get_template(name).render({**common, **context})
    return web.Response(text=html, status=status, content_type="text/html", charset="utf-8")


@functools.cache
def _pages() -> jinja2.Environment:
    """The templates, set up for the first page served: a hub that may never serve one does not load jinja2 at
    start-up (nor markdown-it, which comes with the first message shown)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("bot.web", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    env.globals.update(url=url, markdown=markdown)
    env.filters["timestamp"] = render.timestamp
    return env
