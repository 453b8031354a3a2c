"""Issue 29: the web chat as a daily tool, in one real Chromium shared by the module (the tests run in order,
each from where the last one left the chat): the branch so far after a reload and paged upward, the tree as
navigation, Branch from here and Retry, the dark theme, the phone layout, and the dashboard in Chinese."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from tests.fakes.openai_api import Error, FakeOpenAI
from tests.web.browser import Browser, chromium
from tests.web.conftest import Dashboard, serving, sign_in
from tests.web.seed import linear

pytestmark = pytest.mark.asyncio(loop_scope="module")
SEEDED = 70  # older messages than three pages hold


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hub(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Dashboard]:
    fake = FakeOpenAI()  # with an empty script it echoes the last user message
    await fake.start()
    try:
        async with serving(tmp_path_factory.mktemp("hub"), fake, ("web",)) as running:
            running.fake = fake  # type: ignore[attr-defined]
            yield running
    finally:
        await fake.stop()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Browser]:
    async with chromium(tmp_path_factory.mktemp("browser")) as b:
        await b.context.grant_permissions(["clipboard-read", "clipboard-write"])
        yield b


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def page(hub: Dashboard, browser: Browser) -> Page:
    await sign_in(browser, hub)
    await browser.page.wait_for_url(hub.url("/overview"))
    return browser.page


def fake_of(hub: Dashboard) -> FakeOpenAI:
    return hub.fake  # type: ignore[attr-defined, no-any-return]


async def open_chat(page: Page, hub: Dashboard) -> None:
    await page.goto(hub.url("/webchat"))
    await page.locator("body[data-stream=open][data-history=loaded]").wait_for()


async def say(page: Page, text: str) -> None:
    """Send a line and wait until its answer is stored (it has its trace link then)."""
    answers = await page.locator("#log .bubble.bot .act-trace").count()
    await page.fill("#composer textarea", text)
    await page.press("#composer textarea", "Enter")
    await expect(page.locator("#log .bubble.bot .act-trace")).to_have_count(answers + 1)


async def texts(page: Page) -> list[str]:
    return [t.strip() for t in await page.locator("#log .bubble .body").all_inner_texts()]


async def test_the_branch_so_far_shows_after_a_reload_and_pages_upward(hub: Dashboard, page: Page,
                                                                    browser: Browser) -> None:
    await open_chat(page, hub)
    await expect(page.locator("#log-start")).to_be_visible()  # a new chat: its start, nothing else
    chat = await page.get_attribute("body", "data-chat") or ""
    await linear(hub.app.store, chat, [f"old message {i}" for i in range(SEEDED)])
    await page.reload()
    await page.locator("body[data-history=loaded]").wait_for()
    await expect(page.locator("#log .bubble")).to_have_count(30)
    assert (await texts(page))[-1] == f"old message {SEEDED - 1}"
    assert await page.locator("#log .bubble time").count() == 30  # every message has its time
    for shown in (60, SEEDED):  # scrolled to the top, the next older page loads above
        await page.locator("#log").evaluate("log => log.scrollTo(0, 0)")
        await expect(page.locator("#log .bubble")).to_have_count(shown)
    await expect(page.locator("#log-start")).to_be_visible()
    assert (await texts(page))[0] == "old message 0"
    await say(page, "Please show `code`:\n```\nprint('hi')\n```")
    await page.reload()
    await page.locator("body[data-history=loaded]").wait_for()
    last = page.locator("#log .bubble.bot").last
    await expect(last.locator("pre.code code")).to_have_text("print('hi')")  # a code block, with its copy button
    await last.locator("pre.code .copy-code").click()
    assert await page.evaluate("navigator.clipboard.readText()") == "print('hi')"
    await browser.screenshot("webchat")


async def test_branch_from_here_then_the_tree_leads_back(hub: Dashboard, page: Page, browser: Browser) -> None:
    earlier = page.locator("#log .bubble.bot", has_text="old message 69")
    await earlier.hover()
    await earlier.locator(".act-branch").click()
    await expect(page.locator("#log .note")).to_contain_text("old message 69")
    assert (await texts(page))[-1] == "old message 69"  # the chat shows the branch up to that message
    await say(page, "a second thought")
    fork = page.locator("#tree-panel ul.branches.fork > li.branch")
    await expect(fork).to_have_count(2)
    heads = [h.split(":", 1)[1].strip() for h in await fork.locator("> .head").all_inner_texts()]
    assert heads[0].startswith("Please show") and heads[1].startswith("a second thought")  # made first, drawn first
    await browser.screenshot("webchat-tree")
    await fork.first.locator("a.node").first.click()  # the other branch: the chat goes there, not to the admin page
    await expect(page.locator("#log .bubble.mine").last).to_contain_text("Please show")
    assert page.url == hub.url("/webchat")
    await expect(page.locator("#tree-panel a.node.cursor")).to_contain_text("AI")
    assert (await page.locator("#tree-panel a.node.cursor").get_attribute("data-tip")) is not None


async def test_a_failed_answer_has_a_retry_button(hub: Dashboard, page: Page) -> None:
    fake_of(hub).script(Error(500, message="upstream is down"))
    await page.fill("#composer textarea", "this one fails first")
    await page.press("#composer textarea", "Enter")
    failed = page.locator("#log .bubble.bot").last
    await expect(failed).to_contain_text("the model provider failed")
    await failed.locator("button[data-action='/retry']").click()
    await expect(page.locator("#log .bubble.bot .body").last).to_have_text("this one fails first")  # echoed
    await expect(page.locator("#log .bubble.bot", has_text="the model provider failed")).to_have_count(0)
    await page.reload()
    await page.locator("body[data-history=loaded]").wait_for()
    assert (await texts(page))[-2:] == ["this one fails first", "this one fails first"]
    await expect(page.locator("#log .unanswered")).to_have_count(0)


async def test_retry_from_a_message_answers_again_as_a_new_branch(hub: Dashboard, page: Page) -> None:
    await expect(page.locator("#tree-panel a.node")).not_to_have_count(0)  # drawn, before it is counted
    nodes = await page.locator("#tree-panel a.node").count()
    answer = page.locator("#log .bubble.bot").last
    await answer.hover()
    await answer.locator(".act-retry").click()
    await expect(page.locator("#tree-panel a.node")).to_have_count(nodes + 1)  # a sibling answer, nothing lost
    await expect(page.locator("#log .bubble.bot .act-trace")).not_to_have_count(0)


async def test_dark_theme_and_the_dashboard_in_chinese(hub: Dashboard, page: Page, browser: Browser) -> None:
    await page.click("header .theme-toggle")
    assert await page.get_attribute("html", "data-theme") == "dark"
    background = await page.evaluate("getComputedStyle(document.querySelector('.log')).backgroundColor")
    assert background == "rgb(23, 30, 38)"
    await browser.screenshot("webchat-dark")
    await page.goto(hub.url("/overview"))  # the choice holds on every page
    assert await page.get_attribute("html", "data-theme") == "dark"
    await expect(page.locator("svg.chart .axis text")).to_have_count(6)  # y: top, half, 0; x: −30, −15, now
    await expect(page.locator(".legend .key")).to_have_count(2)
    await browser.screenshot("overview-dark")
    await page.click("header .lang-switch")
    await expect(page.locator("header nav a.here")).to_have_text("概览")
    await expect(page.locator("h1")).to_have_text("概览")
    await page.click("header .theme-toggle")
    assert await page.get_attribute("html", "data-theme") == "light"
    await page.click("header .lang-switch")
    await expect(page.locator("h1")).to_have_text("Overview")


async def test_the_phone_layout_at_390_px(hub: Dashboard, page: Page, browser: Browser) -> None:
    await page.set_viewport_size({"width": 390, "height": 844})
    try:
        await open_chat(page, hub)
        assert await page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing runs off sideways
        composer = await page.locator("#composer").bounding_box()
        assert composer is not None and composer["x"] >= 0 and composer["x"] + composer["width"] <= 390
        await expect(page.locator("#sidebar")).to_be_hidden()
        await browser.screenshot("webchat-mobile")
        await page.click(".drawer-toggle[data-drawer=sidebar]")
        await expect(page.locator("#conversations button.current")).to_be_visible()
        await page.fill("#conversation-search", "no such title")
        await expect(page.locator("#conversations li.hint")).to_be_visible()
        await page.click(".drawer-toggle[data-drawer=tree-panel]")
        await expect(page.locator("#tree-panel a.node.cursor")).to_be_visible()
        await page.goto(hub.url("/overview"))
        await expect(page.locator("header nav")).to_be_hidden()
        await page.click("header .menu-button")
        await expect(page.locator("header nav .logout button")).to_be_visible()  # Sign out stays reachable
        await browser.screenshot("overview-mobile")
    finally:
        await page.set_viewport_size({"width": 1280, "height": 800})
