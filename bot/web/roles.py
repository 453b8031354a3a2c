"""What a dashboard account may reach. The owner (the admin password, or an account with that role) reaches
everything. An admin of some agents, or a viewer, reaches only a short list of pages, refused otherwise (the
default is no): its agents' chats, trees and traces, and its agents' settings and workspace files; a viewer only
reads. A chat is one of its agents' when a binding routes the chat (in a direct message or a group) to one of
them; a binding narrowed to a user does not open that user's chats to it."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler
from multidict import MultiDict

from bot.chats.sessions import SessionKey
from bot.fleet.catalog import Catalog
from bot.httpkit.auth import Who
from bot.httpkit.security import SESSION
from bot.messages import address
from bot.store.dashboard import ChatSummary
from bot.web.dashboard import DEPS

READ = frozenset({"/chats", "/chats/view", "/tree", "/tree/node", "/tree/gap", "/tree/subtree", "/tree/panel",
                  "/tree/export", "/tree/replay", "/trace", "/agents", "/agents/edit"})
WRITE = {"admin": frozenset({"/tree/branch", "/agents/save", "/agents/file", "/logout"}),
         "viewer": frozenset({"/logout"})}
SCOPED_HOME = "/chats"
SCAN = 500


def who(request: web.Request) -> Who:
    session = request.get(SESSION)
    return session.who if session is not None else Who()


def actor(request: web.Request) -> str:
    """Who the fleet's history and the audit log name: "dashboard", or "dashboard:<account>"."""
    account = who(request).account
    return f"dashboard:{account}" if account else "dashboard"


def visible(catalog: Catalog, chat: str, agents: tuple[str, ...]) -> bool:
    try:
        key = SessionKey.parse(chat.strip())  # as the pages read it
    except ValueError:
        return False
    identity = key.identity or key.platform
    return any(catalog.bound_agent(identity, key.chat_id, key.thread_id, "", group) in agents
               for group in (False, True))


def addresses(catalog: Catalog, agents: tuple[str, ...]) -> list[str]:
    """The bot addresses whose chats may be its agents' (an agent bound there; any, for the default agent)."""
    return [address(i.platform, i.tag) for i in catalog.identities.values()
            if "default" in agents or any(b.identity == i.name and b.agent in agents for b in catalog.bindings)]


async def chats_of(request: web.Request, query: str, limit: int, offset: int) -> list[ChatSummary]:
    """An account's chats for the chat list: those of the bots its agents answer on, then only its agents' (at
    most SCAN per bot looked at, newest first)."""
    deps, account = request.app[DEPS], who(request)
    catalog = await deps.fleet.catalog()
    found: list[ChatSummary] = []
    for bot in addresses(catalog, account.agents):
        found += await deps.store.dashboard.list_chats(query, bot, limit=SCAN)
    mine = sorted((c for c in found if visible(catalog, c.key, account.agents)), key=lambda c: c.last_activity,
                  reverse=True)
    return mine[offset:offset + limit]


@web.middleware
async def scoped(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Runs after sign-in (the security middleware): an account's request to a page it may not see is refused."""
    account = who(request)
    if not account.scoped:
        return await handler(request)
    if request.path == "/" and request.method == "GET":
        raise web.HTTPFound(SCOPED_HOME)
    allowed = READ if request.method in ("GET", "HEAD") else WRITE.get(account.role, frozenset())
    if request.path not in allowed:
        raise web.HTTPForbidden(text="this account may not open that page")
    form = await request.post() if request.method == "POST" else MultiDict[str]()
    # every value a handler could read, from the query and the form: a second `chat=` must not slip past
    chats = [*request.query.getall("chat", []), *form.getall("chat", [])]
    names = [*request.query.getall("name", []), *form.getall("name", [])]
    if chats:
        catalog = await request.app[DEPS].fleet.catalog()
        if not all(visible(catalog, str(c), account.agents) for c in chats):
            raise web.HTTPNotFound(text="no such chat")
    if request.path.startswith("/agents/") and (not names or any(n not in account.agents for n in names)
                                                 or "new" in form):
        raise web.HTTPForbidden(text="this account may not change that agent")
    return await handler(request)
