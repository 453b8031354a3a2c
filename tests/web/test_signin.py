"""Sign-in, sign-out, the login rate limit, CSRF, the API's 401 and the bind rule, in a real browser."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest

from bot.config import ConfigError
from bot.httpkit.auth import MAX_FAILURES
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import running_app
from tests.web.browser import Browser
from tests.web.conftest import PASSWORD, Dashboard, sign_in


async def test_wrong_password_then_right_one_then_sign_out(dashboard: Dashboard, browser: Browser) -> None:
    page = browser.page
    await page.goto(dashboard.url("/chats"))
    assert page.url.startswith(dashboard.url("/login?next="))  # anonymous: sent to sign in
    await browser.screenshot("login")
    for password in ("not the password", PASSWORD):  # on the page we were sent to, so it returns us there
        await page.fill("input[name=password]", password)
        await page.click("form.login button[type=submit]")
        if password != PASSWORD:
            assert await page.text_content("p.error") == "Wrong password."
    await page.wait_for_url(dashboard.url("/chats"))
    assert await page.text_content("h1") == "Chats"
    cookie = next(c for c in await browser.context.cookies() if c["name"] == "bothub_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    await page.click("form.logout button")
    await page.wait_for_url(dashboard.url("/login"))
    await page.goto(dashboard.url("/chats"))
    assert page.url.startswith(dashboard.url("/login?next="))  # the old session is gone


async def test_login_attempts_are_rate_limited(dashboard: Dashboard, browser: Browser) -> None:
    for _ in range(MAX_FAILURES):
        await sign_in(browser, dashboard, "guess")
        assert await browser.page.text_content("p.error") == "Wrong password."
    await sign_in(browser, dashboard)  # even the right password waits out the window
    error = await browser.page.text_content("p.error") or ""
    assert re.fullmatch(r"Too many attempts\. Try again in \d+ s\.", error), error
    assert browser.page.url.startswith(dashboard.url("/login"))


async def test_a_post_without_the_csrf_token_is_refused(dashboard: Dashboard, http: aiohttp.ClientSession) -> None:
    signed = await http.post(dashboard.url("/login"), data={"password": PASSWORD, "next": "/chats"})
    assert signed.status == 200 and str(signed.url) == dashboard.url("/chats")
    page = await signed.text()
    token = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    refused = await http.post(dashboard.url("/logout"), data={}, allow_redirects=False)
    assert refused.status == 403 and "CSRF" in await refused.text()
    wrong = await http.post(dashboard.url("/logout"), data={"csrf": token[::-1]}, allow_redirects=False)
    assert wrong.status == 403
    api = await http.post(dashboard.url("/api/v1/branch"), json={"chat": "x:y", "conv": "a", "node": "b"})
    assert api.status == 403
    accepted = await http.post(dashboard.url("/logout"), data={"csrf": token}, allow_redirects=False)
    assert accepted.status == 303 and accepted.headers["Location"] == "/login"


async def test_the_api_answers_401_without_a_session(dashboard: Dashboard, http: aiohttp.ClientSession) -> None:
    for path in ("/api/v1/chats", "/api/v1/search?q=hello", "/api/v1/tree?chat=a:b&conv=c"):
        response = await http.get(dashboard.url(path))
        assert response.status == 401
        assert await response.json() == {"error": "sign in first"}


async def test_pages_carry_a_strict_csp_and_no_inline_script(dashboard: Dashboard,
                                                             http: aiohttp.ClientSession) -> None:
    await http.post(dashboard.url("/login"), data={"password": PASSWORD})
    for path in ("/login", "/chats", "/search?q=hello"):
        response = await http.get(dashboard.url(path))
        csp = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
        assert re.findall(r"<script(?![^>]*\bsrc=)", await response.text()) == []


async def test_no_password_refuses_a_network_bind(tmp_path: Path, fake: FakeOpenAI) -> None:
    config = {"server": {"enabled": True, "host": "0.0.0.0", "port": 0}}
    with pytest.raises(ConfigError, match="BOTHUB_ADMIN_PASSWORD"):
        async with running_app(tmp_path, fake.base_url, config=config):
            pass


async def test_no_password_on_loopback_is_open_to_loopback_names_only(tmp_path: Path, fake: FakeOpenAI,
                                                                      http: aiohttp.ClientSession) -> None:
    async with running_app(tmp_path, fake.base_url, config={"server": {"enabled": True, "port": 0}}) as app:
        base = f"http://127.0.0.1:{app.web_port}"
        assert (await http.get(base + "/chats")).status == 200
        rebound = await http.get(base + "/chats", headers={"Host": f"attacker.example:{app.web_port}"})
        assert rebound.status == 403  # a DNS-rebinding page cannot read the open dashboard
