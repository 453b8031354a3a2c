"""The admin forms sent wrong, as a stale page or a hand-made request would: a missing or invalid field is a 400
naming what the form needs, an unknown code, memory or token is a notice, and none of them changes anything or
reaches the audit log."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import aiohttp

from bot.i18n import t
from tests.web.conftest import Dashboard
from tests.web.test_api import signed_in


async def post(http: aiohttp.ClientSession, dashboard: Dashboard, csrf: str, path: str,
               **form: str) -> tuple[int, str]:
    """(status, the notice a redirect carries, or the body of a refusal)."""
    async with http.post(dashboard.url(path), data={"csrf": csrf, **form}, allow_redirects=False) as resp:
        if resp.status == 303:
            return 303, parse_qs(urlsplit(resp.headers["Location"]).query)["notice"][0]
        return resp.status, await resp.text()


async def test_wrong_admin_forms_change_nothing(dashboard: Dashboard, http: aiohttp.ClientSession) -> None:
    csrf = await signed_in(http, dashboard)
    refused = {
        "/admin/pairing": ({"platform": "telegram", "code": " ", "decision": "approve"},
                           "the form needs platform, code, decision"),
        "/admin/approval": ({"chat": "telegram:5", "id": "a1", "decision": "maybe"},
                            "decision is once, conv, always or deny"),
        "/admin/chat-settings": ({"chat": "telegram:5", "language": "fr"},
                                 "choose a language (en, zh) and one of the allowed models"),
        "/admin/forget": ({"chat": "telegram:5"}, "the form needs chat, number"),
        "/admin/api-tokens/revoke": ({}, "the form needs id"),
    }
    for path, (form, problem) in refused.items():
        assert await post(http, dashboard, csrf, path, **form) == (400, problem), path
    assert await post(http, dashboard, csrf, "/admin/chat-settings", chat="telegram:5", language="en",
                      model="no-such-model") == (400, "choose a language (en, zh) and one of the allowed models")
    assert await post(http, dashboard, csrf, "/admin/pairing", platform="telegram", code="NOPE42",
                      decision="approve") == (303, t("en", "notice_no_code", code="NOPE42", platform="telegram"))
    for number in ("7", "x"):
        assert await post(http, dashboard, csrf, "/admin/forget", chat="telegram:5", number=number) == (
            303, t("en", "notice_no_memory", n=number))
    assert await post(http, dashboard, csrf, "/admin/api-tokens/revoke", id="feedbeef") == (
        303, t("en", "notice_no_token", id="feedbeef"))
    assert await post(http, dashboard, csrf, "/admin/approval-rules/revoke", id="x9") == (
        303, "There is no standing approval #x9.")
    assert await dashboard.app.store.dashboard.list_audit() == []
    assert not await dashboard.app.hub.pairing.is_paired("telegram", "NOPE42")
