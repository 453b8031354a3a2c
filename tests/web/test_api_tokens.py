"""HTTP API tokens in the dashboard, in a real browser: created and shown once, used, revoked, audited."""

from __future__ import annotations

import aiohttp
from playwright.async_api import expect

from bot.chats.api_tokens import digest
from tests.web.browser import Browser
from tests.web.conftest import Dashboard, sign_in


async def ask(http: aiohttp.ClientSession, hub: Dashboard, token: str, text: str) -> tuple[int, dict[str, object]]:
    async with http.post(hub.url("/api/v1/chat/orders/messages"), json={"text": text},
                         headers={"Authorization": f"Bearer {token}"}) as resp:
        return resp.status, await resp.json()


async def test_a_token_is_created_used_and_revoked_from_the_admin_page(with_api: Dashboard, browser: Browser,
                                                                       http: aiohttp.ClientSession) -> None:
    await sign_in(browser, with_api)
    page = browser.page
    await page.goto(with_api.url("/admin"))
    await expect(page.locator("table.api-tokens td.empty")).to_have_text("No tokens yet.")
    await page.fill("form.create-token input[name=name]", "order system")
    await page.click("form.create-token button")
    secret = await page.locator(".new-token code.secret").inner_text()
    assert secret.startswith("bothub_")
    [made] = await with_api.app.store.api_tokens.list()
    assert made.name == "order system" and await with_api.app.store.api_tokens.by_digest(digest(secret)) == made
    await page.locator("form.create-token").scroll_into_view_if_needed()
    await browser.screenshot("admin-api-tokens")

    status, answer = await ask(http, with_api, secret, "where is my order?")
    assert (status, answer["text"]) == (200, "where is my order?")

    await page.goto(with_api.url("/admin"))  # shown once: the page never shows it again
    assert secret not in await page.content()
    row = page.locator("table.api-tokens tr", has_text="order system")
    await row.locator("button", has_text="Revoke").click()
    await expect(page.locator("p.notice")).to_have_text(f"Revoked token {made.id}: requests with it now get 401.")
    await expect(row).to_contain_text("revoked")
    status, _ = await ask(http, with_api, secret, "still there?")
    assert status == 401
    audit = await page.locator("table.audit tr").all_inner_texts()
    assert [r.split("\t")[1:] for r in audit[:2]] == [["dashboard", "api-token-revoke", made.id, ""],
                                                     ["dashboard", "api-token-create", made.id, "order system"]]


async def test_creating_a_token_needs_the_csrf_token(with_api: Dashboard, http: aiohttp.ClientSession) -> None:
    async with http.post(with_api.url("/login"), data={"password": "correct horse battery staple"}) as resp:
        assert resp.status == 200
    async with http.post(with_api.url("/admin/api-tokens"), data={"name": "sneaky"}) as resp:
        assert resp.status == 403
    assert await with_api.app.store.api_tokens.list() == []
