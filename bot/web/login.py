"""Sign-in and sign-out pages, the one-time sign-in link, and the stored password `bothub set-password` writes."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from urllib.parse import quote, urlsplit

from aiohttp import web

from bot.httpkit import lang
from bot.httpkit.auth import SESSION_COOKIE, TooManyAttempts, WebSession, Who
from bot.httpkit.security import AUTH, SESSION, set_session_cookie
from bot.i18n import t
from bot.web.dashboard import DEPS, render_page

PASSWORD_FILE = "admin-password"  # in the data dir: the scrypt hash, never the password
PATH_SAFE = "/-._~!$&'()*+,;=:@%"


def stored_password_hash(data_dir: Path) -> str | None:
    try:
        return (data_dir / PASSWORD_FILE).read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def store_password_hash(data_dir: Path, hashed: str) -> Path:
    """Written owner-only, replacing any earlier one in one rename."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path, scratch = data_dir / PASSWORD_FILE, data_dir / f".{PASSWORD_FILE}.new"
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(hashed + "\n")
    os.replace(scratch, path)
    return path


def _next(value: object) -> str:
    """Only a path on this server, rebuilt from the parsed path and query and percent-encoded: a control
    character, a backslash or a doubled slash cannot turn it into another host after the browser cleans it."""
    raw = value if isinstance(value, str) else ""
    if any(unicodedata.category(c)[0] in "CZ" and c != " " for c in raw):
        return "/"
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc or not parts.path.startswith("/"):
        return "/"
    path = "/" + quote(parts.path, safe=PATH_SAFE).lstrip("/")
    return f"{path}?{quote(parts.query, safe=PATH_SAFE + '?')}" if parts.query else path


def _signed_in(request: web.Request, session: WebSession, target: str) -> web.HTTPSeeOther:
    response = web.HTTPSeeOther(target)
    set_session_cookie(request, response, session)
    response.headers["Cache-Control"] = "no-store"
    return response


async def login_page(request: web.Request) -> web.Response:
    target = _next(request.query.get("next"))
    if token := request.query.get("token"):
        try:
            raise _signed_in(request, request.app[AUTH].redeem(token, request.remote or "?"), target)
        except TooManyAttempts as e:
            return await _page(request, target, t(lang.pick(request), "login_too_many", seconds=e.retry_after), 429)
        except PermissionError:
            return await _page(request, target, t(lang.pick(request), "login_link_spent"), 401)
    return await _page(request, target, "", 200)


async def _page(request: web.Request, target: str, error: str, status: int) -> web.Response:
    """With no admin password, the form only when there are accounts to sign in with (else: the link)."""
    link_only = request.app[AUTH].mode == "sign-in link"
    accounts_only = link_only and bool(await request.app[DEPS].store.accounts.list())
    context = {"next": target, "error": error, "link_only": link_only, "accounts_only": accounts_only}
    return render_page("login.html", request, context, status=status)


async def login(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    auth, target = request.app[AUTH], _next(form.get("next"))
    password, account = str(form.get("password") or ""), str(form.get("account") or "").strip()
    try:
        if account:  # a dashboard account (bot/web/accounts.py); none named: the admin password
            found = await request.app[DEPS].store.accounts.get(account)
            who = Who(account, found[0].role, found[0].agents) if found else Who(account, "viewer")
            session = auth.check_account(who, found[1] if found else None, password, request.remote or "?")
        else:
            session = auth.check_password(password, request.remote or "?")
    except TooManyAttempts as e:
        return await _page(request, target, t(lang.pick(request), "login_too_many", seconds=e.retry_after), 429)
    except PermissionError:
        return await _page(request, target, t(lang.pick(request), "login_wrong"), 401)
    raise _signed_in(request, session, target)


async def logout(request: web.Request) -> web.StreamResponse:
    request.app[AUTH].logout(request[SESSION].token)
    response = web.HTTPSeeOther("/login")
    response.del_cookie(SESSION_COOKIE, path="/")
    raise response


async def home(request: web.Request) -> web.StreamResponse:
    raise web.HTTPFound("/overview")


def add_routes(app: web.Application) -> None:
    app.router.add_get("/login", login_page)
    app.router.add_post("/login", login)
    app.router.add_post("/logout", logout)
    app.router.add_get("/", home)
