"""The overview and its live feed, fed by real traffic through the web chat."""

from __future__ import annotations

import asyncio
import re

from playwright.async_api import expect

from tests.fakes.openai_api import Error, FakeOpenAI
from tests.web.browser import Browser
from tests.web.conftest import Dashboard, sign_in
from tests.web.test_webchat import say


async def test_overview_counts_traffic_and_shows_errors_with_their_ids(webchat: Dashboard, browser: Browser,
                                                                       fake: FakeOpenAI) -> None:
    await sign_in(browser, webchat)
    overview = browser.page
    await overview.wait_for_url(webchat.url("/overview"))
    await overview.locator("#feed[data-stream=open]").wait_for(state="attached")
    chat = await browser.context.new_page()  # the same session, so the same web chat
    await chat.goto(webchat.url("/webchat"))
    await chat.locator("body[data-stream=open]").wait_for()
    await say(chat, "hello overview", 1)
    feed = overview.locator("#feed li")
    await expect(feed.filter(has_text="in · web")).to_have_count(1)  # live, without a reload
    await expect(feed.filter(has_text="out · web")).to_have_count(1)
    await expect(feed.filter(has_text="first_text")).to_have_count(1)

    fake.script(Error(500))
    await say(chat, "this one fails", 2)
    shown_id = re.search(r"error (\w+)\)", await chat.locator("#log .bubble.bot").last.inner_text())
    assert shown_id is not None
    await expect(feed.filter(has_text="error")).to_have_count(1)

    await webchat.app.usage.drain()  # usage is stored in batches, off the answers' path
    await overview.reload()
    platform, state, last_event, restarts = await overview.locator("table.platforms td").all_inner_texts()
    assert (platform, state, restarts) == ("web", "connected", "0") and re.fullmatch(r"\d+ s ago", last_event)
    assert await overview.inner_text("p.figures .in") == "in 0.4"  # two messages in over the last 5 minutes
    assert re.fullmatch(r"p50 \d+\.\d\d s · p95 \d+\.\d\d s", await overview.inner_text("p.latency"))
    tokens = await overview.locator("table.tokens td").all_inner_texts()
    assert tokens[0] == "fake-model" and int(tokens[1]) > 0
    provider, breaker, first_token, requests, last_error = await overview.locator(
        "table.providers td").all_inner_texts()
    assert (provider, breaker, requests) == ("default", "closed", "2 (1 failed)")
    assert re.fullmatch(r"\d+\.\d\d s", first_token) and re.fullmatch(r"server \(\d+ s ago\)", last_error)
    assert re.fullmatch(r"today 0\.0000 \([1-9]\d* tokens\) · this month 0\.0000 \([1-9]\d* tokens\)",
                        await overview.inner_text("p.figures.cost"))  # no price table: tokens, no money
    chat, _, chat_tokens = await overview.locator("table.top-chats td").all_inner_texts()
    assert chat.startswith("web:") and int(chat_tokens.split()[0]) > 0
    errors = await overview.locator("table.errors td").all_inner_texts()
    assert errors[2] == f"server {shown_id.group(1)}"
    assert await overview.locator("svg.chart .series.in rect[height='100']").count() == 1  # the busiest minute
    assert await overview.locator("svg.chart .axis text").first.text_content() == "2"  # the y axis' top
    await browser.screenshot("overview")
    chat_key = errors[1]
    assert chat_key.startswith("web:")  # the error links to its chat …
    assert await overview.get_attribute("table.errors a.error-chat", "href") == f"/chats/view?chat=web%3A{chat_key[4:]}"
    href = await overview.get_attribute("table.errors a.error-trace", "href") or ""
    trace_id = href.rpartition("id=")[2]
    for _ in range(100):  # a run writes its trace once it has ended, right after the failure is shown
        if await webchat.app.store.traces.get(chat_key, trace_id) is not None:
            break
        await asyncio.sleep(0.05)
    await overview.click("table.errors a.error-trace")  # … and to its run's trace
    await expect(overview.locator("dd.outcome")).to_contain_text("failed in")
    await expect(overview.locator("dd.outcome code")).to_have_text(shown_id.group(1))
    await expect(overview.locator("ol.trace-steps li.kind-model")).to_have_count(1)
