"""Search across chats: English and Chinese, snippets, filters, links into the tree; FTS5 on old databases."""

from __future__ import annotations

from tests.web.browser import Browser
from tests.web.conftest import Dashboard, sign_in
from tests.web.seed import linear


async def test_search_in_english_and_chinese_links_into_the_tree(dashboard: Dashboard, browser: Browser) -> None:
    store = dashboard.app.store
    _, msgs = await linear(store, "telegram:1", ["What is the weather in Beijing today?", "Sunny and warm."])
    await linear(store, "feishu:oc_2", ["北京今天的天气怎么样？", "晴，25 度。"])
    await linear(store, "discord:3", ["the Weather channel is noisy"])
    await sign_in(browser, dashboard)
    page = browser.page
    await page.goto(dashboard.url("/search"))
    await page.fill("input[name=q]", "weather")
    await page.click("form.filters button")
    where = await page.locator("ol.hits .where").all_inner_texts()
    assert [w.split(" · ")[0] for w in where] == ["discord:3", "telegram:1"]  # newest first, any case
    assert await page.locator("ol.hits mark").all_inner_texts() == ["Weather", "weather"]
    await browser.screenshot("search")

    await page.goto(dashboard.url("/search?q=" + "北京今天"))
    assert await page.locator("ol.hits mark").all_inner_texts() == ["北京今天"]
    await page.goto(dashboard.url("/search?q=" + "天气"))  # two characters: below a trigram, still found
    assert await page.locator("ol.hits mark").all_inner_texts() == ["天气"]
    await page.goto(dashboard.url("/search?q=weather&platform=telegram"))
    assert await page.locator("ol.hits li").count() == 1
    await page.goto(dashboard.url("/search?q=weather&chat=discord:3"))
    assert (await page.inner_text("ol.hits .where")).startswith("discord:3")
    await page.goto(dashboard.url("/search?q=weather&chat=telegram:1"))
    await page.click("ol.hits a")
    await page.locator("#detail section.detail").wait_for()
    assert page.url.endswith(f"node={msgs[0].id}")
    assert "weather in Beijing" in await page.inner_text("#detail .text")
    await page.goto(dashboard.url("/search?q=nothing-like-this"))
    assert await page.inner_text("ol.hits") == "Nothing found."
