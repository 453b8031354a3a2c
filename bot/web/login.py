"""Sign-in and sign-out pages."""

from __future__ import annotations

from aiohttp import web

from bot.httpkit import lang
from bot.httpkit.auth import SESSION_COOKIE, TooManyAttempts
from bot.httpkit.security import AUTH, SESSION, set_session_cookie
from bot.i18n import t
from bot.web.dashboard import render_page


def _next(value: object) -> str:
    """Only a path on this server: an open redirect must not ride on the sign-in form."""
    target = value if isinstance(value, str) else ""
    return target if target.startswith("/") and not target.startswith(("//", "/\\")) else "/"


async def login_page(request: web.Request) -> web.Response:
    context = {"next": _next(request.query.get("next")), "error": ""}
    return render_page("login.html", request, context)


async def login(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    auth, target = request.app[AUTH], _next(form.get("next"))
    password = form.get("password")
    try:
        session = auth.check_password(password if isinstance(password, str) else "", request.remote or "?")
    except TooManyAttempts as e:
        context = {"next": target, "error": t(lang.pick(request), "login_too_many", seconds=e.retry_after)}
        return render_page("login.html", request, context, status=429)
    except PermissionError:
        context = {"next": target, "error": t(lang.pick(request), "login_wrong")}
        return render_page("login.html", request, context, status=401)
    response = web.HTTPSeeOther(target)
    set_session_cookie(request, response, session)
    raise response


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
