"""Dashboard accounts, kept by the owner: a name, a role (owner; admin of some agents; viewer of some agents) and
a password (stored as its scrypt hash, never shown). An account signs in on the sign-in page with its name;
bot/web/roles.py keeps it to its agents' part. Every change is in the audit log."""

from __future__ import annotations

import asyncio

from aiohttp import web

from bot.fleet.model import NAME
from bot.httpkit.auth import hash_password
from bot.httpkit.security import AUTH
from bot.store.accounts import ROLES, Account
from bot.web.agents import console, say
from bot.web.dashboard import DEPS, render_page, url
from bot.web.roles import actor

MIN_PASSWORD = 10


async def accounts_page(request: web.Request, error: str = "", status: int = 200) -> web.Response:
    deps = request.app[DEPS]
    context = {"accounts": await deps.store.accounts.list(), "roles": ROLES, "error": error,
               "agents": list((await console(request).catalog()).agents), "notice": request.query.get("notice", "")}
    return render_page("accounts.html", request, context, status)


async def account_save(request: web.Request) -> web.StreamResponse:
    """Create an account or change its role, agents or password (an empty password keeps the stored one)."""
    deps = request.app[DEPS]
    form = await request.post()
    name, role = str(form.get("name") or "").strip(), str(form.get("role") or "")
    password = str(form.get("password") or "")
    agents = tuple(dict.fromkeys(str(a) for a in form.getall("agents", [])))
    known = (await console(request).catalog()).agents
    exists = await deps.store.accounts.get(name) is not None
    if not NAME.fullmatch(name) or role not in ROLES:
        return await accounts_page(request, say(request, "acc_bad", name=name), 400)
    if (password or not exists) and len(password) < MIN_PASSWORD:
        return await accounts_page(request, say(request, "acc_short", n=MIN_PASSWORD), 400)
    if role != "owner" and (not agents or any(a not in known for a in agents)):
        return await accounts_page(request, say(request, "acc_agents"), 400)
    hashed = await asyncio.to_thread(hash_password, password) if password else None
    await deps.store.accounts.put(Account(name, role, () if role == "owner" else agents), hashed)
    request.app[AUTH].end_sessions(name)
    await deps.store.dashboard.add_audit(actor(request), "account-set", name,
                                         f"role={role} agents={','.join(agents)}" + (" password" if hashed else ""))
    raise web.HTTPSeeOther(url("/accounts", notice=say(request, "acc_saved", name=name)))


async def account_remove(request: web.Request) -> web.StreamResponse:
    deps = request.app[DEPS]
    name = str((await request.post()).get("name") or "")
    if not await deps.store.accounts.remove(name):
        raise web.HTTPSeeOther(url("/accounts", notice=say(request, "acc_none", name=name)))
    request.app[AUTH].end_sessions(name)
    await deps.store.dashboard.add_audit(actor(request), "account-remove", name)
    raise web.HTTPSeeOther(url("/accounts", notice=say(request, "acc_removed", name=name)))


def add_routes(app: web.Application) -> None:
    app.router.add_get("/accounts", accounts_page)
    app.router.add_post("/accounts", account_save)
    app.router.add_post("/accounts/remove", account_remove)
