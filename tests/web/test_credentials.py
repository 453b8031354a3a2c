"""Absent, empty and wrong, for every credential the web server checks: the HTTP API's bearer token, the
dashboard's session cookie and its CSRF token (form field and header). Each is refused the same way, and a
refused request changes nothing; the right one is then accepted, so the refusals are not a broken route."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest

from tests.adapters.api.conftest import start_api
from tests.fakes.openai_api import FakeOpenAI
from tests.web.conftest import PASSWORD, Dashboard

ABSENT = None


def _variants(right: str) -> list[str | None]:
    """Absent, empty, blank, wrong, truncated, padded and case-changed forms of a credential."""
    return [ABSENT, "", " ", "wrong", right[:-1], right + "x", f" {right}x", right.swapcase()]


async def test_the_api_refuses_an_absent_empty_or_wrong_bearer_token(tmp_path: Path, fake: FakeOpenAI) -> None:
    async for api in start_api(tmp_path, fake):
        url = f"{api.base}/api/v1/chat/k/messages"
        headers: list[dict[str, str]] = [{}, {"Authorization": ""}, {"Authorization": "Bearer"},
                                         {"Authorization": "Bearer "}, {"Authorization": api.token},
                                         {"Authorization": f"Basic {api.token}"}]
        headers += [{"Authorization": f"Bearer {v}"} for v in _variants(api.token) if v]
        for header in headers:
            async with api.http.post(url, json={"text": "hi"}, headers=header) as resp:
                assert resp.status == 401, header
                assert resp.headers["WWW-Authenticate"].startswith("Bearer")
        assert fake.requests == [], "a refused request reached the model"
        assert (await api.say("k", "hello"))["text"] == "hello"


async def _signed_in(dashboard: Dashboard, http: aiohttp.ClientSession) -> tuple[str, str]:
    """(session cookie, CSRF token) of a fresh sign-in."""
    signed = await http.post(dashboard.url("/login"), data={"password": PASSWORD, "next": "/chats"})
    assert signed.status == 200
    match = re.search(r'name="csrf-token" content="([^"]+)"', await signed.text())
    assert match is not None
    cookie = next(c.value for c in http.cookie_jar if c.key == "bothub_session")
    return cookie, match[1]


async def test_the_dashboard_refuses_an_absent_empty_or_wrong_session(dashboard: Dashboard) -> None:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        cookie, _ = await _signed_in(dashboard, http)
    for value in _variants(cookie):
        async with aiohttp.ClientSession() as other:
            headers = {} if value is None else {"Cookie": f"bothub_session={value}"}
            api = await other.get(dashboard.url("/api/v1/chats"), headers=headers)
            assert api.status == 401, value
            page = await other.get(dashboard.url("/chats"), headers=headers, allow_redirects=False)
            assert page.status in (302, 303) and page.headers["Location"].startswith("/login"), value
    async with aiohttp.ClientSession() as right:
        assert (await right.get(dashboard.url("/api/v1/chats"), headers={"Cookie": f"bothub_session={cookie}"})
                ).status == 200


@pytest.mark.parametrize("where", ["form", "header"])
async def test_a_write_with_an_absent_empty_or_wrong_csrf_token_is_refused(dashboard: Dashboard,
                                                                        where: str) -> None:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        _, token = await _signed_in(dashboard, http)
        for value in _variants(token):
            if where == "form":
                refused = await http.post(dashboard.url("/logout"), allow_redirects=False,
                                          data={} if value is None else {"csrf": value})
            else:
                refused = await http.post(dashboard.url("/logout"), allow_redirects=False,
                                          headers={} if value is None else {"X-CSRF-Token": value})
            assert refused.status == 403, value
        assert (await http.get(dashboard.url("/api/v1/chats"))).status == 200, "a refused logout signed us out"
        kwargs = {"data": {"csrf": token}} if where == "form" else {"headers": {"X-CSRF-Token": token}}
        accepted = await http.post(dashboard.url("/logout"), allow_redirects=False, **kwargs)  # type: ignore[arg-type]
        assert accepted.status == 303
