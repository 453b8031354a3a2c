"""The web chat in a real browser: streamed answers, commands and buttons, the live tree, branch here."""

from __future__ import annotations

import sqlite3

import aiohttp
from playwright.async_api import Page, expect

from bot.i18n import t
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.web.browser import Browser
from tests.web.conftest import PASSWORD, Dashboard, sign_in


async def open_chat(browser: Browser, dashboard: Dashboard) -> Page:
    await sign_in(browser, dashboard)
    await browser.page.wait_for_url(dashboard.url("/overview"))
    await browser.page.click("header nav >> text=Web chat")
    await browser.page.locator("body[data-stream=open]").wait_for()
    return browser.page


async def say(page: Page, text: str, answers: int) -> None:
    """Type a line, send it with Enter, and wait until the chat shows `answers` bot messages."""
    await page.fill("#composer textarea", text)
    await page.press("#composer textarea", "Enter")
    await expect(page.locator("#log .bubble.bot")).to_have_count(answers)


async def test_answers_stream_in_and_the_tree_panel_follows(webchat: Dashboard, browser: Browser,
                                                            fake: FakeOpenAI) -> None:
    page = await open_chat(browser, webchat)
    fake.script(Text("Hello **there**, how can I help?", chunks=4, delay=0.1))
    await say(page, "hi bot", 1)
    await expect(page.locator("#log .bubble.bot .body").last).to_have_text("Hello there, how can I help?")
    assert await page.locator("#log .bubble.bot strong").inner_text() == "there"
    await expect(page.locator("#tree-panel a.node")).to_have_count(3)  # system, you, AI
    assert await page.locator("#log .bubble.mine .body").all_inner_texts() == ["hi bot"]
    await browser.screenshot("webchat")


async def test_commands_and_buttons_work(webchat: Dashboard, browser: Browser) -> None:
    page = await open_chat(browser, webchat)
    await say(page, "first", 1)
    await say(page, "/goto 1", 2)  # a typed command
    await say(page, "second try", 3)  # branches under [1]
    # a fork under [1]: the old answer [2] first, the new branch beside it, both one level in
    await expect(page.locator("#tree-panel ul.branches.fork > li.branch")).to_have_count(2)
    heads = await page.locator("#tree-panel ul.branches.fork > li.branch > .head").all_inner_texts()
    assert [h.split(":")[0] for h in heads] == ["[2] AI", "[3] You"]
    await say(page, "/tree", 4)
    tree = page.locator("#log .bubble.bot").last
    assert "[2] AI: first" in await tree.locator(".body").inner_text()
    await tree.locator("button[data-action='/goto 2']").click()  # a button: the same command text
    await expect(page.locator("#log .bubble.bot")).to_have_count(5)
    await expect(page.locator("#tree-panel a.node.cursor")).to_contain_text("[2] AI: first")


async def test_branch_here_from_the_tree_then_send_from_the_web_chat(webchat: Dashboard, browser: Browser) -> None:
    page = await open_chat(browser, webchat)
    await say(page, "question one", 1)
    await say(page, "question two", 2)
    await expect(page.locator("#tree-panel a.node")).to_have_count(5)
    await page.click("#tree-panel .panel-title a")  # the full tree of this chat's conversation
    await page.click("#tree a.node:has-text('[2] AI')")
    await page.click("form.branch-here button")
    await expect(page.locator("p.notice")).to_contain_text("Cursor moved")
    await page.click("header nav >> text=Web chat")
    await page.locator("body[data-stream=open]").wait_for()
    await page.locator("body[data-history=loaded]").wait_for()  # the chat shows the branch it moved to
    assert await page.locator("#log .bubble .body").all_inner_texts() == ["question one", "question one"]
    await say(page, "question two, again", 2)
    await expect(page.locator("#tree-panel a.node")).to_have_count(7)
    heads = await page.locator("#tree-panel ul.branches.fork > li.branch > .head").all_inner_texts()
    assert [h.split(":")[0] for h in heads] == ["[3] You", "[5] You"]  # made first, drawn first
    assert (await page.inner_text("#tree-panel a.node.cursor")).startswith("[6] AI: question two, again")


async def test_markup_sent_to_the_chat_stays_text(webchat: Dashboard, browser: Browser) -> None:
    page = await open_chat(browser, webchat)
    await say(page, "<img src=x onerror=alert(1)> [x](javascript:alert(2))", 1)
    await page.wait_for_timeout(200)
    assert await page.locator("#log img, #tree-panel img").count() == 0
    assert await page.locator("a[href^='javascript']").count() == 0
    assert "<img src=x onerror=alert(1)>" in await page.locator("#log .bubble.bot").inner_text()
    assert browser.dialogs == []


async def test_the_web_chat_refuses_anonymous_and_bad_posts(webchat: Dashboard, http: aiohttp.ClientSession) -> None:
    assert (await http.post(webchat.url("/webchat/send"), json={"text": "hi"})).status == 401
    events = await http.get(webchat.url("/webchat/events"), allow_redirects=False)
    assert events.status == 302 and events.headers["Location"].startswith("/login")
    page = await (await http.post(webchat.url("/login"), data={"password": PASSWORD})).text()
    csrf = page.split('name="csrf-token" content="')[1].split('"')[0]
    headers = {"X-CSRF-Token": csrf}
    assert (await http.post(webchat.url("/webchat/send"), json={"text": "hi"})).status == 403  # no token
    empty = await http.post(webchat.url("/webchat/send"), json={"text": "  "}, headers=headers)
    assert empty.status == 400 and await empty.json() == {"error": "the message is empty"}
    junk = await http.post(webchat.url("/webchat/send"), data="not json", headers=headers)
    assert junk.status == 400
    sent = await http.post(webchat.url("/webchat/send"), json={"text": "hi"}, headers=headers)
    assert sent.status == 202


async def test_a_message_the_locked_database_did_not_keep_is_shown_as_not_sent_and_can_be_sent_again(
        webchat: Dashboard, browser: Browser, fake: FakeOpenAI) -> None:
    """Another process holds the database's write lock past the store's busy timeout: the hub cannot keep the
    message (NotKept), the page says so politely, and sending it again gets it answered, once."""
    page = await open_chat(browser, webchat)
    fake.script(Text("kept the second time"))
    locker = sqlite3.connect(webchat.app.cfg.data_dir / "bothub.sqlite3", isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        await page.fill("#composer textarea", "hello")
        await page.press("#composer textarea", "Enter")
        await expect(page.locator("#log p.error")).to_contain_text(t("en", "not_kept"), timeout=20_000)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    await say(page, "hello", 1)
    await expect(page.locator("#log .bubble.bot .body").last).to_have_text("kept the second time")
    assert len(fake.requests) == 1
