"""Admin actions in the browser, each through the chat commands' services and into the audit log."""

from __future__ import annotations

import asyncio

from playwright.async_api import expect

from bot.agent.approvals import Decision
from bot.agent.tools.registry import ToolContext
from tests.web.browser import Browser
from tests.web.conftest import Dashboard, sign_in
from tests.web.seed import linear


async def test_approve_and_deny_pairing_requests(dashboard: Dashboard, browser: Browser) -> None:
    pairing = dashboard.app.hub.pairing
    first = await pairing.code_for("telegram", "1001")
    second = await pairing.code_for("telegram", "1002")
    await sign_in(browser, dashboard)
    page = browser.page
    await page.goto(dashboard.url("/admin"))
    rows = page.locator("table.pairings tr")
    await expect(rows).to_have_count(2)
    await browser.screenshot("admin")
    await rows.filter(has_text=first).locator("button[value=approve]").click()
    await expect(page.locator("p.notice")).to_have_text("Approved: telegram user 1001.")
    await page.locator("table.pairings tr", has_text=second).locator("button[value=deny]").click()
    await expect(page.locator("p.notice")).to_have_text("Denied: telegram user 1002.")
    assert await pairing.is_paired("telegram", "1001") and not await pairing.is_paired("telegram", "1002")
    assert await pairing.approve("telegram", second) is None  # the denied code is gone
    audit = await page.locator("table.audit tr").all_inner_texts()
    assert [row.split("\t")[1:] for row in audit] == [
        ["dashboard", "pair-deny", "telegram", "1002"], ["dashboard", "pair-approve", "telegram", "1001"]]


async def test_a_pending_shell_command_is_approved_from_the_dashboard(dashboard: Dashboard,
                                                                      browser: Browser) -> None:
    asked: list[str] = []

    async def notify(reply: object) -> None:
        asked.append(str(reply))

    ctx = ToolContext(chat="telegram:5", workdir=dashboard.app.cfg.data_dir, is_admin=True, notify=notify)
    decision = asyncio.create_task(dashboard.app.approvals.ask(ctx, "ls -la", destructive=False))
    await sign_in(browser, dashboard)
    page = browser.page
    await page.goto(dashboard.url("/admin"))
    row = page.locator("table.approvals tr", has_text="ls -la")
    assert (await row.inner_text()).startswith("telegram:5")
    await row.locator("button[value=once]").click()
    await expect(page.locator("p.notice")).to_have_text("Approved: `ls -la`")
    assert await asyncio.wait_for(decision, 5) is Decision.APPROVED
    assert asked  # the chat was asked as usual


async def test_always_from_the_dashboard_leaves_a_rule_it_lists_and_revokes(dashboard: Dashboard,
                                                                            browser: Browser) -> None:
    async def notify(reply: object) -> None:
        return None

    ctx = ToolContext(chat="telegram:6", workdir=dashboard.app.cfg.data_dir, is_admin=True, notify=notify,
                      conversation_id="c1")
    decision = asyncio.create_task(dashboard.app.approvals.ask(ctx, "du -sh .", destructive=False))
    await sign_in(browser, dashboard)
    page = browser.page
    await page.goto(dashboard.url("/admin"))
    row = page.locator("table.approvals tr", has_text="du -sh .")
    assert await row.locator("button").all_inner_texts() == [
        "✅ Approve once", "✅ For this conversation", "✅ Always this command", "Deny"]
    await row.locator("button[value=always]").click()
    assert await asyncio.wait_for(decision, 5) is Decision.APPROVED
    await page.goto(dashboard.url("/admin"))
    rule = page.locator("table.approval-rules tr", has_text="du -sh .")
    assert "telegram:6" in await rule.inner_text() and "dashboard" in await rule.inner_text()
    await rule.locator("button").click()
    await expect(page.locator("p.notice")).to_have_text("Revoked standing approval #1.")
    assert await dashboard.app.approvals.rules() == []
    actions = [e.action for e in await dashboard.app.store.dashboard.list_audit(10)]
    assert actions[0] == "approval-rule-revoke" and set(actions[1:3]) == {"shell-always", "approval-rule-add"}


async def test_access_skills_and_roles_are_shown(dashboard: Dashboard, browser: Browser) -> None:
    await sign_in(browser, dashboard)
    page = browser.page
    await page.goto(dashboard.url("/admin"))
    assert "default" in (await page.inner_text("p.roles")).split(", ")
    assert await page.locator("ul.skills li").count() >= 1


async def test_a_chats_language_model_and_memories_are_managed_from_its_page(dashboard: Dashboard,
                                                                            browser: Browser) -> None:
    await linear(dashboard.app.store, "telegram:77", ["hello", "hi"])
    memories = dashboard.app.store.memories
    await memories.add("telegram:77", "fact", "likes tea")
    await memories.add("telegram:77", "pref", "answers in Chinese")
    await sign_in(browser, dashboard)
    page = browser.page
    await page.goto(dashboard.url("/chats/view?chat=telegram:77"))
    assert await page.locator("table.memories td.content").all_inner_texts() == ["likes tea", "answers in Chinese"]
    await page.locator("table.memories tr", has_text="likes tea").locator("button").click()
    await expect(page.locator("p.notice")).to_have_text("Forgot memory 1.")
    assert [e.content for e in await memories.page("telegram:77", limit=10)] == ["answers in Chinese"]
    await page.select_option("form.chat-settings select[name=language]", "zh")
    await page.click("form.chat-settings button")
    await expect(page.locator("p.notice")).to_have_text("Saved.")
    settings = await dashboard.app.store.settings.get("telegram:77")
    assert settings.language == "zh"
    logged = [(e.action, e.target) for e in await dashboard.app.store.dashboard.list_audit()]
    assert logged == [("chat-settings", "telegram:77"), ("forget", "telegram:77")]
