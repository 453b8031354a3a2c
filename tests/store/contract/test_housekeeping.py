"""Conversation housekeeping on every backend: rename, auto titles, archive, soft delete with restore,
purge, and search — each persisted across a reopen, each confined to its own chat."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.store import Store
from bot.tree.model import AttachedFile, Message
from tests.store.conftest import StoreFactory

A, B = "test:a", "test:b"
T0 = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def _file(path: str) -> AttachedFile:
    return AttachedFile("file", "text/plain", 3, "0" * 64, path, path.rsplit("/", 1)[-1])


async def _talk(store: Store, chat: str, *texts: str, files: tuple[AttachedFile, ...] = ()) -> str:
    info = await store.conversations.create(chat)
    msgs = [Message.new("user" if i % 2 == 0 else "assistant", text, files=files if i == 0 else ())
            for i, text in enumerate(texts)]
    await store.conversations.append(chat, info.id, msgs)
    return info.id


async def test_rename_archive_and_delete_survive_a_reopen(new_store: StoreFactory) -> None:
    first = new_store()
    await first.open()
    named = await _talk(first, A, "plan the trip", "sure")
    titled = await _talk(first, A, "what is a monad", "a monoid in…")
    archived = await _talk(first, A, "old stuff", "ok")
    deleted = await _talk(first, A, "secret", "ok")
    renamed = await first.housekeeping.rename(A, named, "  Trip\nto   Rome  ")
    assert renamed is not None and renamed.title == "Trip to Rome"
    assert not await first.housekeeping.auto_title(A, named, "Travel plans")  # a chosen title stays
    assert await first.housekeeping.auto_title(A, titled, "Monads explained")
    assert not await first.housekeeping.auto_title(A, titled, "Second try")  # titled once
    shelved = await first.housekeeping.set_archived(A, archived, True)
    assert shelved is not None and shelved.archived
    gone = await first.housekeeping.delete(A, deleted, T0)
    assert gone is not None and gone.id == deleted
    await first.close()

    again = new_store()
    await again.open()
    try:
        listed = await again.conversations.recent(A)
        assert [(c.id, c.title) for c in listed] == [(titled, "Monads explained"), (named, "Trip to Rome")]
        every = await again.conversations.recent(A, include_archived=True)
        assert [(c.id, c.archived) for c in every] == [(archived, True), (titled, False), (named, False)]
        assert await again.conversations.count(A) == 2 and await again.conversations.count(A, True) == 3
        assert await again.conversations.get(A, deleted) is None
        assert await again.conversations.find(A, deleted) == []
        assert await again.conversations.load(A, deleted, "p") is None
        assert await again.conversations.summaries() == [(A, 3)]
        await again.conversations.set_active(A, archived)  # switching to it takes it out of the archive
        back = await again.conversations.get(A, archived)
        assert back is not None and not back.archived
    finally:
        await again.close()


async def test_deleting_or_archiving_the_active_conversation_moves_the_chat(store: Store) -> None:
    older = await _talk(store, A, "older")
    newer = await _talk(store, A, "newer")
    assert await store.conversations.active(A) == newer
    await store.housekeeping.delete(A, newer, T0)
    assert await store.conversations.active(A) == older  # the most recent one left
    await store.housekeeping.set_archived(A, older, True)
    fresh = await store.conversations.active(A)
    assert fresh not in (None, older, newer)  # nothing visible left: a new, empty one
    info = await store.conversations.get(A, fresh or "")
    assert info is not None and info.message_count == 0
    opened = await store.conversations.open_chat(A)
    assert opened.conversation.id == fresh
    await store.housekeeping.delete(A, older, T0)  # not the active one: the chat stays where it is
    assert await store.conversations.active(A) == fresh


async def test_restore_brings_back_the_latest_deletion_inside_the_window(store: Store) -> None:
    first = await _talk(store, A, "first", "one")
    second = await _talk(store, A, "second", "two")
    await store.housekeeping.delete(A, first, T0)
    await store.housekeeping.delete(A, second, T0 + timedelta(minutes=5))
    assert await store.housekeeping.restore(B, T0 - timedelta(days=1)) is None  # not B's to restore
    back = await store.housekeeping.restore(A, T0 + timedelta(minutes=1))
    assert back is not None and back.id == second and back.message_count == 2
    assert await store.conversations.active(A) == second
    assert await store.housekeeping.restore(A, T0 + timedelta(minutes=1)) is None  # `first` is older than that
    again = await store.housekeeping.restore(A, T0)
    assert again is not None and again.id == first
    assert await store.housekeeping.restore(A, T0) is None  # nothing deleted left
    assert {c.id for c in await store.conversations.recent(A)} == {first, second}


async def test_restore_drops_the_empty_conversation_a_delete_left_the_chat_on(store: Store) -> None:
    only = await _talk(store, A, "the only one")
    await store.housekeeping.delete(A, only, T0)
    empty = await store.conversations.active(A)
    assert empty not in (None, only)
    await store.housekeeping.restore(A, T0)
    assert [c.id for c in await store.conversations.recent(A)] == [only]
    assert await store.conversations.get(A, empty or "") is None
    kept = await _talk(store, A, "not empty")  # the active one now, with messages: it stays
    await store.housekeeping.delete(A, only, T0)
    await store.housekeeping.restore(A, T0)
    assert {c.id for c in await store.conversations.recent(A)} == {only, kept}


async def test_purge_removes_rows_and_reports_only_files_nobody_else_uses(store: Store) -> None:
    shared, own = _file("uploads/shared.txt"), _file("uploads/own.txt")
    doomed = await _talk(store, A, "look at these", "seen", files=(shared, own))
    kept = await _talk(store, A, "the same file again", "ok", files=(shared,))
    recent = await _talk(store, A, "deleted a minute ago", "ok")
    other = await _talk(store, B, "b's", "ok", files=(own,))  # another chat's folder is another folder
    info = await store.conversations.get(A, doomed)
    assert info is not None
    await store.summaries.put(A, doomed, info.current_message_id, "summary", 2)
    await store.housekeeping.delete(A, doomed, T0)
    await store.housekeeping.delete(A, recent, T0 + timedelta(minutes=9))
    purged = await store.housekeeping.purge(T0 + timedelta(minutes=5))
    assert [(p.chat, p.id, p.files) for p in purged] == [(A, doomed, ("uploads/own.txt",))]
    assert await store.housekeeping.restore(A, T0 - timedelta(days=1)) is not None  # `recent` only
    assert await store.housekeeping.restore(A, T0 - timedelta(days=1)) is None  # `doomed` is gone for good
    assert await store.summaries.of_conversation(A, doomed) == {}
    assert await store.housekeeping.search(A, "look at these") == []
    assert {c.id for c in await store.conversations.recent(A)} == {kept, recent}
    assert await store.conversations.get(B, other) is not None
    assert await store.housekeeping.purge(T0 + timedelta(days=1)) == []


async def test_search_finds_this_chats_live_conversations_only(store: Store) -> None:
    rome = await _talk(store, A, "Flights to Rome in May?", "Try the early train to the airport.")
    tokyo = await _talk(store, A, "东京的天气怎么样", "Tokyo is rainy in June; the early flights are cheap.")
    shelved = await _talk(store, A, "Rome again, old notes", "fine")
    await store.housekeeping.set_archived(A, shelved, True)
    deleted = await _talk(store, A, "Rome secret plans", "ok")
    await store.housekeeping.delete(A, deleted, T0)
    theirs = await _talk(store, B, "Rome for chat B", "EARLY flights")
    found = await store.housekeeping.search(A, "rome")
    assert [m.conversation.id for m in found] == [shelved, rome]  # newest match first; archived ones too
    assert found[0].conversation.archived
    assert any(match and text.lower() == "rome" for text, match in found[1].snippet)
    assert [m.conversation.id for m in await store.housekeeping.search(A, "EARLY flights")] == [tokyo]
    assert [m.conversation.id for m in await store.housekeeping.search(A, "天气")] == [tokyo]  # two characters
    assert [m.conversation.id for m in await store.housekeeping.search(A, "to")] == [tokyo, rome]
    assert await store.housekeeping.search(A, "secret") == []
    assert await store.housekeeping.search(A, "100%_ \\") == []
    assert await store.housekeeping.search(A, "   ") == []
    assert [m.conversation.id for m in await store.housekeeping.search(B, "rome")] == [theirs]
    assert len(await store.housekeeping.search(A, "o", limit=1)) == 1


async def test_another_chats_conversation_cannot_be_touched_by_id(store: Store) -> None:
    theirs = await _talk(store, B, "chat B's private talk", "ok")
    before = await store.conversations.get(B, theirs)
    mine = await _talk(store, A, "mine")
    assert await store.housekeeping.rename(A, theirs, "hijacked") is None
    assert not await store.housekeeping.auto_title(A, theirs, "hijacked")
    assert await store.housekeeping.set_archived(A, theirs, True) is None
    assert await store.housekeeping.delete(A, theirs, T0) is None
    assert await store.housekeeping.search(A, "private") == []
    assert await store.conversations.get(B, theirs) == before
    assert await store.conversations.active(B) == theirs and await store.conversations.active(A) == mine
