"""/merge N through the real hub: another branch's conclusion lands under the cursor as one marked message with
a way back to its source, the model reads it from then on, and the odd cases are answered politely."""

from __future__ import annotations

from pathlib import Path

from bot.agent.compaction import MERGER
from bot.app import App
from bot.i18n import t
from bot.replies import Reply
from tests.fakes.openai_api import Error, FakeOpenAI, Text
from tests.harness import RecordingAdapter, running_app


async def said(rec: RecordingAdapter, app: App, text: str) -> Reply:
    await rec.say(text)
    await app.hub.idle()
    return [reply for chat, reply in rec.visible.values() if chat.chat_id == "c1"][-1]


async def test_a_side_branch_is_merged_as_one_marked_summary(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config={"llm": {"max_retries": 0}}) as app:
        for text in ("where should we go?", "what about Lisbon?", "/goto 2", "what about Rome?"):
            await said(rec, app, text)  # #1 #2, then #3 #4 (Lisbon), then from #2: #5 #6 (Rome)
        fake.script(Text("Lisbon in May; flights are cheap then."))
        done = await said(rec, app, "/merge 4")
        assert done.text == t("en", "merge_done", n=4, covered=2, new=7)
        assert [[b.action for b in row] for row in done.buttons] == [["/goto 4", "/tree"]]
        summary_request = fake.requests[-1]["body"]["messages"]
        assert summary_request[0]["content"] == MERGER
        assert "what about Lisbon?" in summary_request[1]["content"]
        assert "Rome" not in summary_request[1]["content"] and "where should we go" not in summary_request[1]["content"]

        tree = (await said(rec, app, "/tree")).text
        assert "↪ Merged from the branch of message #4" in tree
        await said(rec, app, "so which one?")
        history = fake.requests[-1]["body"]["messages"]
        merged = [m for m in history if m["role"] == "assistant" and "Lisbon in May" in str(m["content"])]
        assert len(merged) == 1 and str(merged[0]["content"]).startswith("↪ Merged from the branch of message #4:")
        assert any("what about Rome?" in str(m["content"]) for m in history)  # still this branch


async def test_odd_merges_are_answered_politely(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config={"llm": {"max_retries": 0}}) as app:
        await said(rec, app, "hello")
        requests = len(fake.requests)
        assert (await said(rec, app, "/merge 2")).text == t("en", "merge_same_branch", n=2)
        assert (await said(rec, app, "/merge 99")).text == t("en", "goto_missing", n=99)
        assert (await said(rec, app, "/merge two")).text == t("en", "usage", usage="/merge <N>")
        assert len(fake.requests) == requests  # none of them asked the model
        await said(rec, app, "/goto 0")
        await said(rec, app, "another start")
        fake.script(Error(500))
        assert (await said(rec, app, "/merge 2")).text == t("en", "merge_failed")
