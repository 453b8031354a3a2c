"""/rename, /archive, /delete, /undo, /unarchive, /search and /list all typed into the real hub: persisted
across a restart, confined to the chat that typed them, the undo window on an injected clock, and the
purge (run by the app's housekeeping loop) removing rows and files."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bot.app import App
from bot.chats.sessions import SessionKey
from bot.messages import Attachment
from bot.replies import Reply
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.scheduler.conftest import FakeClock


async def _say(rec: RecordingAdapter, app: App, *texts: str, chat: str = "c1") -> Reply:
    for text in texts:
        await rec.say(text, chat_id=chat)
        await app.hub.idle()
    return [reply for ref_chat, reply in rec.visible.values() if ref_chat.chat_id == chat][-1]


def _current(app: App, chat: str = "c1") -> str:
    conv_id = app.lanes.session(SessionKey("recording", chat)).conversation_id
    assert conv_id is not None
    return conv_id


def _actions(reply: Reply) -> list[list[str]]:
    return [[b.action for b in row] for row in reply.buttons]


async def test_rename_archive_and_delete_persist_across_a_restart(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await _say(rec, app, "plan the trip")
        trip = _current(app)
        assert (await _say(rec, app, "/rename  Trip to   Rome ")).text == "Renamed this conversation to “Trip to Rome”."
        await _say(rec, app, "/new", "old notes")
        notes = _current(app)
        archived = await _say(rec, app, f"/archive {notes[:5]}")
        assert archived.text.split("\n")[0] == (
            f"Archived conversation `{notes}` (old notes): hidden from /list, shown by /list all. Switching to it "
            f"or /unarchive {notes} brings it back.")
        assert _actions(archived) == [[f"/unarchive {notes}"]]
        assert archived.text.split("\n")[1] == f"You are now in conversation `{trip}` (Trip to Rome)."
        assert _current(app) == trip
        await _say(rec, app, "/new", "secret plans")
        moved = _current(app)
        deleted = await _say(rec, app, f"/delete {moved}")
        assert deleted.text.split("\n")[0] == (
            f"Deleted conversation `{moved}` (secret plans). Send /undo within 10 minutes to bring it back.")
        assert _actions(deleted) == [["/undo"]]
        assert deleted.text.split("\n")[1] == f"You are now in conversation `{trip}` (Trip to Rome)."
        assert _current(app) == trip

    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:  # message ids go on counting
        listing = await _say(rec, app, "/list")
        assert listing.title == "Conversations (1)"
        assert listing.text == f"▶ `{trip}` Trip to Rome · 2 msgs · just now"
        assert _actions(listing) == [["/list all"]]
        assert listing.buttons[0][0].label == "📦 Archived (1)"
        everything = await _say(rec, app, "/list all")
        assert everything.title == "All conversations (2)"
        assert everything.text.split("\n") == [f"· `{notes}` old notes · 📦 archived · 2 msgs · just now",
                                              f"▶ `{trip}` Trip to Rome · 2 msgs · just now"]  # by last activity
        assert (await _say(rec, app, f"/switch {moved}")).text == f"No conversation {moved!r} in this chat."
        switched = await _say(rec, app, f"/switch {notes}")
        assert switched.text == (f"Switched to conversation `{notes}` (old notes). "
                                 "It was archived; it is back in /list now.")
        assert _actions(switched) == [[f"/archive {notes}", f"/delete {notes}"]]
        assert (await _say(rec, app, "/list")).title == "Conversations (2)"


async def test_deleting_the_last_conversation_starts_a_new_one(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await _say(rec, app, "only one")
        only = _current(app)
        reply = await _say(rec, app, f"/delete {only}")
        fresh = _current(app)
        assert fresh != only
        assert reply.text.split("\n")[1] == f"You are now in conversation `{fresh}` ((empty))."
        await _say(rec, app, "after the delete")
        assert (await _say(rec, app, "/list")).text == f"▶ `{fresh}` after the delete · 2 msgs · just now"
        assert fake.requests[-1]["body"]["messages"][1:] == [{"role": "user", "content": "after the delete"}]


async def test_bad_arguments_get_a_polite_answer(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await _say(rec, app, "hello")
        answers = {text: (await _say(rec, app, text)).text for text in (
            "/rename", "/rename " + "x" * 61, "/delete", "/delete 1234 5678", "/delete zzzz", "/archive 0badc0de",
            "/unarchive", f"/unarchive {_current(app)}", "/search", "/search   ", "/search nothing-like-this", "/undo")}
    assert answers == {
        "/rename": "Usage: /rename <title>",
        "/rename " + "x" * 61: "A title can be at most 60 characters (this one has 61); please shorten it.",
        "/delete": "Usage: /delete <id>",
        "/delete 1234 5678": "Usage: /delete <id>",
        "/delete zzzz": "No conversation 'zzzz' in this chat.",
        "/archive 0badc0de": "No conversation '0badc0de' in this chat.",
        "/unarchive": "Usage: /unarchive <id>",
        f"/unarchive {_current(app)}": f"Conversation `{_current(app)}` (hello) is not archived.",
        "/search": "Usage: /search <words>",
        "/search   ": "Usage: /search <words>",
        "/search nothing-like-this": "Nothing in this chat's conversations contains “nothing-like-this”.",
        "/undo": "Nothing to undo: no conversation was deleted here in the last 10 minutes.",
    }


async def test_another_chats_conversations_are_out_of_reach(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await _say(rec, app, "my private itinerary", chat="c1")
        theirs = _current(app, "c1")
        await _say(rec, app, "hello", chat="c2")
        for command in ("delete", "archive", "unarchive", "switch"):
            reply = await _say(rec, app, f"/{command} {theirs}", chat="c2")
            assert reply.text == f"No conversation {theirs!r} in this chat."
        assert (await _say(rec, app, "/search itinerary", chat="c2")).text == (
            "Nothing in this chat's conversations contains “itinerary”.")
        await _say(rec, app, "/rename stolen", chat="c2")  # renames c2's own conversation only
        await _say(rec, app, f"/delete {theirs}", chat="c1")
        assert (await _say(rec, app, "/undo", chat="c2")).text.startswith("Nothing to undo")
        restored = await _say(rec, app, "/undo", chat="c1")
        assert restored.text == f"Restored conversation `{theirs}` (my private itinerary); you are in it now."
        found = await _say(rec, app, "/search ITINERARY", chat="c1")
        assert found.title == "Search: ITINERARY"
        assert found.text == f"· `{theirs}` my private itinerary: my private **itinerary**"
        assert _current(app, "c1") == theirs
        assert (await _say(rec, app, "/list", chat="c1")).text.startswith(f"▶ `{theirs}` my private itinerary")


async def test_undo_window_and_the_purge_of_rows_and_files(tmp_path: Path, fake: FakeOpenAI) -> None:
    clock = FakeClock(datetime(2026, 11, 30, 20, 0, tzinfo=UTC))
    rec = RecordingAdapter()
    assert rec.files is not None
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), clock=clock) as app:
        rec.files.served["h1"] = b"my notes\n"
        await rec.say("keep this", attachments=(Attachment("file", "notes.txt", "text/plain", None, "h1"),))
        await app.hub.idle()
        doomed = _current(app)
        [upload] = list((app.hub.runner.workdir(app.lanes.session(SessionKey("recording", "c1"))) / "uploads")
                        .iterdir())
        await _say(rec, app, "/new", "a later chat")
        searched = await _say(rec, app, "/search keep")
        assert _actions(searched) == [[f"/switch {doomed}"]]
        await _say(rec, app, f"/delete {doomed}")
        clock.advance(minutes=9, seconds=59)
        assert (await _say(rec, app, "/undo")).text.startswith(f"Restored conversation `{doomed}`")
        assert _current(app) == doomed
        await _say(rec, app, f"/delete {doomed}")
        assert upload.exists()
        clock.advance(minutes=10, seconds=1)  # past the window; the housekeeping loop's next pass purges it
        assert (await _say(rec, app, "/undo")).text.startswith("Nothing to undo")
        await wait_for(lambda: not upload.exists())
        assert await app.store.conversations.load("recording:c1", doomed, "p") is None
        assert await app.store.housekeeping.restore("recording:c1", datetime(2000, 1, 1, tzinfo=UTC)) is None
        assert (await _say(rec, app, "/search keep")).text == "Nothing in this chat's conversations contains “keep”."
