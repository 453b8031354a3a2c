"""Issue 12 §2 through the hub: /tree numbers never change, so an old /tree's button still means its message."""

from __future__ import annotations

from pathlib import Path

from bot.messages import ButtonPress
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app


async def test_an_old_tree_button_still_goes_to_its_message(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        for text in ("first question", "second question", "/goto 2", "another way"):
            await rec.say(text)
            await app.hub.idle()
        await rec.say("/tree")
        await app.hub.idle()
        old_tree = rec.sent[-1][1]
        assert "[5] You: another way" in old_tree.text
        old_buttons = {b.label: b.action for row in old_tree.buttons for b in row}
        assert old_buttons["Go to [6]"] == "/goto 6"  # the newest leaf

        for text in ("/goto 4", "continue the first way"):  # grows the first branch: numbers 7 and 8
            await rec.say(text)
            await app.hub.idle()
        await rec.say("/tree")
        await app.hub.idle()
        new_tree = rec.sent[-1][1].text
        assert "[5] You: another way" in new_tree and "[7] You: continue the first way" in new_tree
        assert new_tree.index("[7] You") < new_tree.index("[5] You")  # drawn depth first, numbered by age

        await rec.say("/goto 5", origin=ButtonPress("press-1", None))  # a press on the old message's button
        await rec.say("/status")
        await app.hub.idle()
    moved, status = rec.texts()[-2:]
    assert moved.startswith("Moved to [5] another way")
    assert "Cursor: [5] (see /tree)" in status
