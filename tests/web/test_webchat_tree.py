"""What only a tree can do, in the web chat in real Chromium: /merge lands a marked summary whose button goes to its
source; /replay shows the diff and both runs' figures in the chat and on the dashboard's replay page; a /handoff
code from another chat continues that tree here, once; /forget_me erases the chat and answers with a receipt."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.async_api import Page, expect

from bot.agent.compaction import MERGER
from bot.agent.titles import TITLER
from tests.core.test_forget_me import rows_left
from tests.fakes.openai_api import FakeOpenAI, Step, Text
from tests.harness import RecordingAdapter
from tests.web.browser import Browser
from tests.web.conftest import Dashboard, serving
from tests.web.test_webchat import open_chat, say

MERGED = "Lisbon in May; flights are cheap then."
ANSWERS = ["I wrote the note.\nIt says version one.", "I wrote the note.\nIt now says version one."]


def model(body: dict[str, Any]) -> Step:
    """Titles, merge summaries, then the note's answer (the replay gets the second); anything else is echoed."""
    messages = body["messages"]
    if messages[0]["content"] == TITLER:
        return Text("Notes")
    if messages[0]["content"] == MERGER:
        return Text(MERGED)
    if messages[-1]["content"] == "write the note":
        return Text(ANSWERS.pop(0))
    return Text(f"echo: {messages[-1]['content']}")


async def chat_key(page: Page) -> str:
    key = await page.locator("body").get_attribute("data-chat")
    assert key and key.startswith("web:")
    return key


async def test_merge_lands_a_marked_summary_that_links_its_source(webchat: Dashboard, browser: Browser,
                                                                  fake: FakeOpenAI) -> None:
    fake.responder = model
    page = await open_chat(browser, webchat)
    for answers, text in enumerate(("where should we go?", "what about Lisbon?", "/goto 2", "what about Rome?"), 1):
        await say(page, text, answers)  # #1 #2, #3 #4 (Lisbon), then from #2: #5 #6 (Rome)
    await say(page, "/merge 4", 5)
    reply = page.locator("#log .bubble.bot").last
    await expect(reply.locator(".body")).to_have_text(
        "Merged: 2 messages of the branch of #4 summarized into message #7 here.")
    merged = page.locator("#tree-panel a.node.cursor")
    await expect(merged).to_contain_text("[7] AI: ↪ Merged from the branch of message #4")
    store, chat = webchat.app.store, await chat_key(page)
    info = (await store.conversations.recent(chat))[0]
    [row] = [m for m in await store.conversations.chain(chat, info.id, info.current_message_id) if m.number == 7]
    assert row.content == f"↪ Merged from the branch of message #4:\n\n{MERGED}"
    source = reply.locator("button[data-action='/goto 4']")
    await expect(source).to_have_text("Go to #4")
    await source.click()
    await expect(page.locator("#tree-panel a.node.cursor")).to_contain_text("[4] AI: echo: what about Lisbon?")


async def test_replay_shows_its_diff_in_the_chat_and_on_the_dashboard(webchat: Dashboard, browser: Browser,
                                                                      fake: FakeOpenAI) -> None:
    fake.responder = model
    page = await open_chat(browser, webchat)
    await say(page, "write the note", 1)
    await page.fill("#composer textarea", "/replay")
    await page.press("#composer textarea", "Enter")
    report = page.locator("#log .bubble.bot").filter(has_text="The replay of #2 changed 2 line(s):")
    await expect(report.locator("pre").first).to_contain_text("-It says version one.\n+It now says version one.")
    await expect(report.locator("pre").last).to_contain_text("tokens")
    await expect(page.locator("#log .bubble.bot h4")).to_have_text(["↻ Replay of #2 · fake-model"])  # the stream
    await expect(page.locator("#tree-panel a.node.cursor")).to_contain_text("[2] AI")  # the cursor stayed
    await expect(page.locator("#tree-panel a.node:has-text('[3] AI')")).to_contain_text("↻ Replay of #2")

    await page.click("#tree-panel .panel-title a")  # the dashboard's tree of this conversation
    await page.click("#tree a.node:has-text('[3] AI')")
    compare = page.locator("#detail .replay-of a")
    await expect(compare).to_have_text("Compare with #2")
    await compare.click()
    await expect(page.locator("h1")).to_have_text("Replay of #2 · fake-model")
    await expect(page.locator("pre.replay-diff .file")).to_have_text(["--- #2", "+++ replay"])
    await expect(page.locator("pre.replay-diff .del")).to_have_text(["-It says version one."])
    await expect(page.locator("pre.replay-diff .add")).to_have_text(["+It now says version one."])
    figures = page.locator("table.replay-figures tbody tr")
    await expect(figures.nth(0)).to_have_text(re.compile(r"model\s*fake-model\s*fake-model"))
    tokens = await figures.nth(1).locator("td").all_inner_texts()
    assert len(tokens) == 2 and all(re.fullmatch(r"[1-9]\d* \+ [1-9]\d*", cell) for cell in tokens), tokens
    await expect(figures.nth(3)).to_have_text(re.compile(r"time\s*\d+\.\d\d s\s*\d+\.\d\d s"))
    await expect(page.locator(".replay-side.replayed .text")).to_have_text("I wrote the note. It now says version one.")
    await browser.screenshot("tree-replay")
    await page.click(".lang-switch")
    await expect(page.locator("h1")).to_have_text("#2 的重放 · fake-model")
    await expect(page.locator("table.replay-figures tbody tr").nth(1).locator("th")).to_have_text("令牌")


async def test_a_handoff_from_another_chat_continues_its_tree_in_the_web_chat(tmp_path: Path, fake: FakeOpenAI,
                                                                             browser: Browser) -> None:
    fake.responder = model
    other = RecordingAdapter()
    async with serving(tmp_path, fake, ("web",), adapters=(other,)) as hub:
        await other.say("plan the trip")
        await other.say("/handoff")
        await hub.app.hub.idle()
        [code] = re.findall(r"/resume ([A-Z2-9]{6})", other.texts("c1")[-1])
        page = await open_chat(browser, hub)
        await say(page, f"/resume {code}", 1)
        await expect(page.locator("#log .bubble.bot .body").last).to_contain_text(
            "Continued here: «plan the trip» (messages: 2, files: 0)")
        await expect(page.locator("#tree-panel a.node")).to_have_text([
            re.compile(r"^\[0\] System"), re.compile(r"^\[1\] You: plan the trip"),
            re.compile(r"^\[2\] AI: echo: plan the trip")])
        await say(page, "and the budget?", 2)
        asked = [m["content"] for m in fake.requests[-1]["body"]["messages"] if m["role"] == "user"]
        assert asked[-2:] == ["plan the trip", "and the budget?"]  # the same history, continued here
        chat = await chat_key(page)
        info = (await hub.app.store.conversations.recent(chat))[0]
        path = await hub.app.store.conversations.chain(chat, info.id, info.current_message_id)
        assert [(m.number, m.content) for m in path] == [(1, "plan the trip"), (2, "echo: plan the trip"),
                                                         (3, "and the budget?"), (4, "echo: and the budget?")]
        await say(page, f"/resume {code}", 3)  # a code works once
        await expect(page.locator("#log .bubble.bot .body").last).to_have_text(
            f"No job or live hand-off code {code} here: a code works once and for 10 minutes (ask for a new one "
            "with /handoff); /jobs lists this chat's jobs.")


async def test_forget_me_erases_the_web_chat_and_gives_a_receipt(webchat: Dashboard, browser: Browser,
                                                                fake: FakeOpenAI) -> None:
    fake.responder = model
    page = await open_chat(browser, webchat)
    await say(page, "remember that I like tangerine", 1)
    chat = await chat_key(page)
    database = webchat.app.cfg.data_dir / "bothub.sqlite3"
    assert rows_left(database, chat)
    await say(page, "/forget_me", 2)
    confirm = page.locator("#log .bubble.bot").last.locator("button[data-action='/forget_me confirm']")
    await expect(confirm).to_have_text("Yes, erase everything")
    await confirm.click()
    receipt = page.locator("#log .bubble.bot").filter(has_text="Erased. What went:")
    await expect(receipt).to_contain_text("messages: 2")
    await expect(receipt).to_contain_text("conversations: 1")
    assert rows_left(database, chat) == {}
    [audit] = [a for a in await webchat.app.store.dashboard.list_audit() if a.action == "forget"]
    assert (audit.actor, audit.target) == ("web:admin", chat)
    await page.goto(webchat.url("/admin"))
    await expect(page.locator("table.audit tr").filter(has_text="forget")).to_contain_text(chat)
