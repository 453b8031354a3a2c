"""Which language a browser gets: the one it chose with the switch (a cookie), else the first of its own
languages we speak (Accept-Language), else English."""

from __future__ import annotations

from aiohttp import web

LANG_COOKIE = "bothub_lang"
LANGUAGES = ("en", "zh")


def pick(request: web.Request) -> str:
    chosen = request.cookies.get(LANG_COOKIE, "")
    if chosen in LANGUAGES:
        return chosen
    for part in request.headers.get("Accept-Language", "").split(","):
        tag = part.split(";")[0].strip().lower()[:2]
        if tag in LANGUAGES:
            return tag
    return "en"


async def switch(request: web.Request) -> web.StreamResponse:
    """`/lang?to=zh&next=/overview`: remember the choice for a year and go back (only to a path here)."""
    to, target = request.query.get("to", ""), request.query.get("next", "/")
    if not target.startswith("/") or target.startswith(("//", "/\\")):
        target = "/"
    response = web.HTTPSeeOther(target)
    if to in LANGUAGES:
        response.set_cookie(LANG_COOKIE, to, max_age=365 * 86400, samesite="Lax", path="/", secure=request.secure)
    raise response
