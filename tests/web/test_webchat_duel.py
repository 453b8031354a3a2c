"""A duel in the web chat, in real Chromium: one message with a column per model, both answers streaming into
their columns at the same time; the vote button stores the vote, puts the cursor on the chosen answer and counts
toward the win rate of the duel's topic tag on the dashboard's usage page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import expect

from bot.agent.topics import TAGGER
from tests.fakes.openai_api import FakeOpenAI, Step, Text
from tests.web.browser import chromium
from tests.web.conftest import serving, sign_in


def by_model(body: dict[str, Any]) -> Step:
    if body["messages"][0]["content"] == TAGGER:
        return Text("coding")
    if body["model"] == "fake-model":
        return Text("the first answer")
    return Text(" ".join(f"{body['model']}{i}" for i in range(40)), delay=0.05)


async def test_a_duel_streams_side_by_side_and_the_vote_moves_the_cursor(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.responder = by_model
    config = {"llm": {"allowed_models": ["alpha", "beta"]}}
    async with serving(tmp_path, fake, ("web",), config=config) as hub, chromium(tmp_path / "browser") as browser:
        await sign_in(browser, hub)
        page = browser.page
        await page.goto(hub.url("/webchat"))
        await page.locator("body[data-stream=open][data-history=loaded]").wait_for()
        await page.fill("#composer textarea", "which is better?")
        await page.press("#composer textarea", "Enter")
        await expect(page.locator("#log .bubble.bot .body").last).to_have_text("the first answer")
        await page.fill("#composer textarea", "/duel")
        await page.press("#composer textarea", "Enter")
        columns = page.locator("#log .duel .columns")
        await expect(columns.locator(".bubble.streaming")).to_have_count(2)  # both answers growing at once…
        await expect(page.locator("#log .duel")).to_have_count(1)  # …in one message
        await expect(columns.locator(".bubble h4")).to_have_text(["Answer 1 · alpha", "Answer 2 · beta"])
        boxes = [await b.bounding_box() for b in await columns.locator(".bubble").all()]
        assert boxes[0] and boxes[1] and boxes[0]["x"] + boxes[0]["width"] <= boxes[1]["x"]  # side by side
        votes = columns.locator(".buttons button")
        await expect(votes).to_have_count(2, timeout=20_000)
        await expect(columns.locator(".bubble .body").last).to_contain_text("beta39")
        await votes.last.click()
        await expect(page.locator("#log").get_by_text("#4 (beta) chosen")).to_be_visible()
        rates = await hub.app.store.votes.win_rates(topic="coding")
        assert [(r.name, r.wins) for r in rates] == [("beta", 1), ("alpha", 0)]
        await page.fill("#composer textarea", "/tree")
        await page.press("#composer textarea", "Enter")
        await expect(page.locator("#log").get_by_text("[4] AI: beta0", exact=False)).to_contain_text("←")
        await page.goto(hub.url("/usage?tag=coding"))
        await expect(page.locator("table.usage-duels tr").first).to_contain_text("beta")
        await expect(page.locator("table.usage-duels tr").first).to_contain_text("won 1 of 1 votes")
        await expect(page.locator(".duel-tags a.here")).to_have_text("coding (1)")
