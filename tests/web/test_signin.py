"""Sign-in, sign-out, the login rate limit, CSRF, the API's 401 and the bind rule, in a real browser."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

import aiohttp

from bot.cli.doctor import INFO, OK, dashboard_check
from bot.httpkit.auth import MAX_FAILURES
from bot.i18n import t
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import make_config, running_app
from tests.web.browser import Browser
from tests.web.conftest import PASSWORD, Dashboard, serving, sign_in


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


OPEN_PAGES = {"/login", "/lang", "/healthz", "/readyz", "/metrics"}  # what a visitor may see before signing in


async def test_every_dashboard_and_web_chat_route_needs_a_session(tmp_path: Path, fake: FakeOpenAI) -> None:
    """Sign-in is asked by path prefix (bot/httpkit/security.py): a page added later and not listed there would be
    open to anyone who can reach the port. Every route the dashboard and the web chat mount is tried signed out."""
    tried: list[str] = []
    async with serving(tmp_path, fake, ("web",)) as dashboard, aiohttp.ClientSession() as anonymous:
        for route in dashboard.app.web.router.routes():
            module = getattr(route.handler, "__module__", "") or ""
            path = route.resource.canonical if route.resource is not None else ""
            if not module.startswith(("bot.web", "adapters.web")) or path in OPEN_PAGES or "static" in path:
                continue
            url = dashboard.url(re.sub(r"\{[^}]*\}", "x", path))
            method = "GET" if route.method in ("GET", "HEAD", "*") else route.method
            async with anonymous.request(method, url, allow_redirects=False) as response:
                assert response.status in (302, 303, 401, 403), f"{method} {path} answered {response.status} signed out"
            tried.append(path)
    assert {"/agents", "/identities", "/accounts", "/chats", "/webchat", "/api/v1/chats"} <= set(tried)


async def test_pages_carry_a_strict_csp_and_no_inline_script(dashboard: Dashboard,
                                                             http: aiohttp.ClientSession) -> None:
    await http.post(dashboard.url("/login"), data={"password": PASSWORD})
    for path in ("/login", "/chats", "/search?q=hello"):
        response = await http.get(dashboard.url(path))
        csp = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
        assert re.findall(r"<script(?![^>]*\bsrc=)", await response.text()) == []


async def test_no_password_means_a_one_time_sign_in_link(tmp_path: Path, fake: FakeOpenAI,
                                                          http: aiohttp.ClientSession) -> None:
    """Issue 28 §4: with no password nobody is the admin by reaching 127.0.0.1; the printed link signs in once."""
    async with running_app(tmp_path, fake.base_url, config={"server": {"enabled": True, "port": 0}}) as app:
        base = f"http://127.0.0.1:{app.web_port}"
        anonymous = await http.get(base + "/admin", allow_redirects=False)
        assert anonymous.status == 302 and anonymous.headers["Location"].startswith("/login?next=")
        assert (await http.get(base + "/api/v1/chats")).status == 401
        page = await (await http.get(base + "/login")).text()
        assert "bothub set-password" in page and 'name="password"' not in page
        link = app.sign_in_path()
        assert link is not None and link.startswith("/login?token=")
        signed = await http.get(base + link + "&next=/admin", allow_redirects=False)
        assert signed.status == 303 and signed.headers["Location"] == "/admin"
        assert (await http.get(base + "/admin", allow_redirects=False)).status == 200  # the cookie it set
        assert app.sign_in_path() is None  # spent
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as other:
            again = await other.get(base + link, allow_redirects=False)
            assert again.status == 401 and "used already" in await again.text()
            assert (await other.get(base + "/admin", allow_redirects=False)).status == 302


async def test_set_password_keeps_only_a_hash_and_signs_in(tmp_path: Path, fake: FakeOpenAI,
                                                          http: aiohttp.ClientSession) -> None:
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTHUB_")}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", "set-password", "--data-dir", str(data),
                                                cwd=tmp_path, env=env, stdin=PIPE, stdout=PIPE, stderr=PIPE)
    out, err = await asyncio.wait_for(proc.communicate(b"a long enough secret\n"), 60)
    assert proc.returncode == 0, err
    assert b"a long enough secret" not in out + err
    stored = (data / "admin-password").read_text(encoding="utf-8")
    assert stored.startswith("scrypt$") and "a long enough secret" not in stored
    assert (data / "admin-password").stat().st_mode & 0o077 == 0
    cfg, env = make_config(tmp_path, fake.base_url, {"server": {"enabled": True, "port": 0}})
    assert dashboard_check(cfg, env) == (OK, t("en", "doctor_dashboard_stored"))
    assert dashboard_check(cfg, {**env, "BOTHUB_ADMIN_PASSWORD": "x"}) == (OK, t("en", "doctor_dashboard_env"))
    async with running_app(tmp_path, fake.base_url, config={"server": {"enabled": True, "port": 0}}) as app:
        base = f"http://127.0.0.1:{app.web_port}"
        assert app.sign_in_path() is None  # a password is set: no link
        wrong = await http.post(base + "/login", data={"password": "guess"})
        assert wrong.status == 401
        right = await http.post(base + "/login", data={"password": "a long enough secret", "next": "/admin"})
        assert right.status == 200 and str(right.url) == base + "/admin"
    (data / "admin-password").unlink()
    assert dashboard_check(cfg, env) == (INFO, t("en", "doctor_dashboard_link"))


async def test_an_account_signs_in_by_name_and_ends_with_its_removal(dashboard: Dashboard,
                                                                    http: aiohttp.ClientSession) -> None:
    """Issue 30 item 7: a wrong name is refused like a wrong password (and counted); a removed account's session
    ends at once."""
    signed = await http.post(dashboard.url("/login"), data={"password": PASSWORD, "next": "/accounts"})
    token = re.search(r'name="csrf-token" content="([^"]+)"', await signed.text()).group(1)  # type: ignore[union-attr]
    made = await http.post(dashboard.url("/accounts"), data={"csrf": token, "name": "vic", "role": "viewer",
                                                             "agents": "default", "password": "vic-password-1"})
    assert made.status == 200 and "Account vic saved" in await made.text()
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as other:
        nobody = await other.post(dashboard.url("/login"), data={"account": "nobody", "password": "vic-password-1"})
        assert nobody.status == 401 and t("en", "login_wrong") in await nobody.text()
        vic = await other.post(dashboard.url("/login"), data={"account": "vic", "password": "vic-password-1"})
        assert vic.status == 200 and str(vic.url) == dashboard.url("/chats")
        assert (await other.get(dashboard.url("/admin"))).status == 403
        assert (await other.get(dashboard.url("/api/v1/chats"))).status == 403
        gone = await http.post(dashboard.url("/accounts/remove"), data={"csrf": token, "name": "vic"})
        assert "Account vic removed" in await gone.text()
        after = await other.get(dashboard.url("/chats"), allow_redirects=False)
        assert after.status == 302 and after.headers["Location"].startswith("/login")
    audit = [(e.action, e.target) for e in await dashboard.app.store.dashboard.list_audit()]
    assert ("account-set", "vic") in audit and ("account-remove", "vic") in audit
