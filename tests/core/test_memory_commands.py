"""/memory and /forget through the hub: one chat never sees another's (the store itself: tests/store/)."""

from __future__ import annotations

from pathlib import Path

from bot.chats.sessions import SessionKey
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app


async def test_memory_and_forget_commands_stay_in_their_chat(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        chat_a = SessionKey("recording", "a").storage_key
        for i in range(12):
            await app.store.memories.add(chat_a, "pref", f"memory number {i + 1}", ["t"])
        await rec.say("/memory", chat_id="b")
        await rec.say("/forget 1", chat_id="b")
        await rec.say("/forget one", chat_id="b")
        await rec.say("/memory", chat_id="a")
        await rec.say("/memory 2", chat_id="a")
        await rec.say("/memory 9", chat_id="a")
        await rec.say("/forget 12", chat_id="a")
        await app.hub.idle()
        assert await app.store.memories.count(chat_a) == 11
    b_empty, b_missing, b_usage = rec.texts("b")
    assert b_empty == "Nothing remembered in this chat yet."
    assert b_missing == "No memory #1 in this chat — see /memory."
    assert b_usage == "Usage: /forget <N>"
    page1, page2, no_page, forgot = (reply for chat, reply in rec.sent if chat.chat_id == "a")
    assert page1.monospace and page1.title == "Memory (12)"
    assert page1.text.splitlines()[0] == " 1. [pref] memory number 1 (#t)"
    assert len(page1.text.splitlines()) == 10
    assert [b.action for row in page1.buttons for b in row] == ["/memory 2"]
    assert page2.text.splitlines() == ["11. [pref] memory number 11 (#t)", "12. [pref] memory number 12 (#t)"]
    assert page2.buttons == ()
    assert no_page.text == "There is no page 9; memory has 2 page(s)."
    assert forgot.text.startswith("Forgot memory #12.")


async def test_a_reloaded_session_reads_the_memory_written_while_it_was_dropped(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Another replica may answer the chat while this one has dropped its session: the reload must not reuse the
    memory lines cached before (and the other chat's stay its own)."""
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        chat_a, chat_b = SessionKey("recording", "a").storage_key, SessionKey("recording", "b").storage_key
        await rec.say("a asks first", chat_id="a")
        await rec.say("b asks first", chat_id="b")
        await app.hub.idle()
        await app.store.memories.add(chat_a, "fact", "the user's cat is called Miso")  # as another replica would
        await rec.say("a asks again", chat_id="a")  # the session is still here, with the lines cached with it
        await app.hub.idle()
        app.lanes.forget(chat_a)
        app.lanes.forget(chat_b)
        await rec.say("a asks after the reload", chat_id="a")
        await rec.say("b asks after the reload", chat_id="b")
        await app.hub.idle()
    seen = {r["body"]["messages"][-1]["content"]: "Miso" in r["body"]["messages"][0]["content"] for r in fake.requests}
    assert seen == {"a asks first": False, "b asks first": False, "a asks again": False,
                    "a asks after the reload": True, "b asks after the reload": False}
