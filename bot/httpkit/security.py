"""One middleware for the whole server: sign-in on dashboard paths, CSRF on their writes, strict headers.

Dashboard pages answer an anonymous visitor with a redirect to /login, the JSON API with 401. Every
state-changing request on a protected path must carry the session's CSRF token (form field `csrf` or
header X-CSRF-Token); SameSite=Strict cookies already stop most cross-site requests, the token stops the
rest. There is no open access: without a session every protected path is refused, whatever the address.
"""

from __future__ import annotations

from urllib.parse import quote

from aiohttp import web
from aiohttp.typedefs import Handler

from bot.httpkit.auth import SESSION_COOKIE, Auth, WebSession

AUTH = web.AppKey("dashboard_auth", Auth)
SESSION = web.RequestKey("dashboard_session", WebSession)
PROTECTED = ("/chats", "/tree", "/trace", "/search", "/admin", "/overview", "/usage", "/logs", "/webchat", "/api/v1/",
             "/events", "/logout", "/agents", "/identities", "/bindings",
             "/accounts")
BEARER_PATHS = ("/api/v1/chat/",)  # the HTTP API adapter checks its own bearer tokens there (no cookie, no CSRF)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def is_protected(path: str) -> bool:
    return (path == "/" or path.startswith(PROTECTED)) and not path.startswith(BEARER_PATHS)


def set_session_cookie(request: web.Request, response: web.StreamResponse, session: WebSession) -> None:
    response.set_cookie(SESSION_COOKIE, session.token, httponly=True, samesite="Strict", path="/",
                        secure=request.secure)


def _refuse(request: web.Request, status: int, message: str) -> web.Response:
    if request.path.startswith("/api/"):
        return web.json_response({"error": message}, status=status)
    return web.Response(status=status, text=message)


async def _csrf_token(request: web.Request) -> str | None:
    if header := request.headers.get("X-CSRF-Token"):
        return header
    if request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        value = (await request.post()).get("csrf")
        return value if isinstance(value, str) else None
    return None


async def _guarded(request: web.Request, handler: Handler) -> web.StreamResponse:
    auth = request.app[AUTH]
    session = auth.session(request.cookies.get(SESSION_COOKIE))
    if session is None:
        if request.path.startswith("/api/") or request.method not in SAFE_METHODS:
            return _refuse(request, 401, "sign in first")
        raise web.HTTPFound(f"/login?next={quote(request.path_qs, safe='')}")
    if request.method not in SAFE_METHODS and not auth.csrf_ok(session, await _csrf_token(request)):
        return _refuse(request, 403, "missing or wrong CSRF token; reload the page and try again")
    request[SESSION] = session
    return await handler(request)


@web.middleware
async def security(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        response = await (_guarded(request, handler) if is_protected(request.path) else handler(request))
    except web.HTTPException as exc:  # redirects and errors get the same headers
        exc.headers.update(HEADERS)
        raise
    if not response.prepared:  # a stream (SSE) sent its headers already
        response.headers.update(HEADERS)
    return response
