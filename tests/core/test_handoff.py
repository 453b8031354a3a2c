"""/handoff and /resume through the real hub: a conversation continues on another platform with its tree, its
numbers and its files; a code works once, expires, is refused to another person on the same platform, and a
group takes a conversation only from an admin (Telegram fake, real PTB)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from bot.app import App
from bot.chats.sessions import SessionKey
from bot.i18n import t
from bot.messages import Attachment
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import RecordingAdapter, running_app, wait_for

CODE = re.compile(r"/resume ([A-Z2-9]{6})")


class Elsewhere(RecordingAdapter):
    name = "elsewhere"


async def said(rec: RecordingAdapter, app: App, text: str, chat: str = "c1", user: str = "u1",
               **extra: object) -> str:
    await rec.say(text, chat_id=chat, user=user, **extra)  # type: ignore[arg-type]
    await app.hub.idle()
    return rec.texts(chat)[-1]


def code_in(text: str) -> str:
    found = CODE.search(text)
    assert found, text
    return found.group(1)


def session_conv(app: App, platform: str, chat: str) -> str:
    conv = app.lanes.session(SessionKey(platform, chat)).conversation_id
    assert conv is not None
    return conv


async def test_a_conversation_continues_on_another_platform_with_its_tree_and_files(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    here, there = RecordingAdapter(), Elsewhere()
    assert here.files is not None
    async with running_app(tmp_path, fake.base_url, adapters=(here, there)) as app:
        here.files.served["h1"] = b"packing list\n"
        await said(here, app, "plan the trip", attachments=(Attachment("file", "list.txt", "text/plain", None, "h1"),))
        await said(here, app, "and the budget")
        offered = await said(here, app, "/handoff")
        code = code_in(offered)
        source = session_conv(app, "recording", "c1")

        resumed = await said(there, app, f"/resume {code.lower()}", chat="d1", user="999")  # any case works
        assert resumed.startswith("Continued here: «plan the trip") and "(messages: 4, files: 1)" in resumed
        tree = await said(there, app, "/tree", chat="d1", user="999")
        assert "plan the trip" in tree and "and the budget" in tree
        folder = app.hub.runner.workdir(app.lanes.session(SessionKey("elsewhere", "d1")))
        [copied] = list((folder / "uploads").rglob("*list*"))
        assert copied.read_bytes() == b"packing list\n"
        await said(there, app, "what did we say?", chat="d1", user="999")
        asked = [m["content"] for m in fake.requests[-1]["body"]["messages"]]
        assert any("and the budget" in str(c) for c in asked)  # the history came along

        assert await said(there, app, f"/resume {code}", chat="d2", user="999") == t("en", "resume_unknown", id=code)
        info = await app.store.conversations.get(SessionKey("recording", "c1").storage_key, source)
        assert info is not None and not info.archived  # a copy: the source keeps it


async def test_same_platform_needs_the_same_person_and_move_archives_the_source(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await said(rec, app, "the secret plan")
        code = code_in(await said(rec, app, "/handoff move"))
        source = session_conv(app, "recording", "c1")
        assert await said(rec, app, f"/resume {code}", chat="c2", user="u2") == t("en", "handoff_someone_else")
        assert await said(rec, app, f"/resume {code}", chat="c1") == t("en", "handoff_same_chat")
        moved = await said(rec, app, f"/resume {code}", chat="c3")  # still valid: refusals do not spend it
        assert moved == t("en", "handoff_moved", title="the secret plan", messages=2, files=0)
        info = await app.store.conversations.get(SessionKey("recording", "c1").storage_key, source)
        assert info is not None and info.archived
        assert await said(rec, app, "/handoff sideways") == t("en", "usage", usage="/handoff [move|link]")


async def test_a_code_expires(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await said(rec, app, "hello")
        code = code_in(await said(rec, app, "/handoff"))
        handoffs = app.hub.services.handoffs
        assert handoffs is not None
        handoffs.clock = lambda: time.time() + 601
        assert await said(rec, app, f"/resume {code}", chat="c2") == t("en", "resume_unknown", id=code)


async def test_a_group_takes_a_conversation_only_from_an_admin(tmp_path: Path, fake: FakeOpenAI) -> None:
    tg = FakeTelegram()
    await tg.start()
    admin, bob = {"id": 42, "is_bot": False, "first_name": "Ann"}, {"id": 77, "is_bot": False, "first_name": "Bob"}
    config = {"telegram": {"access": {"admins": ["42"], "dm_policy": "open", "group_policy": "open"}}}
    try:
        async with running_app(tmp_path, fake.base_url, ("telegram",), config=config,
                               env=tg.env):
            for user in (bob, admin):  # each makes a code in their own DM
                tg.inject_message(user["id"], "our group plan", from_user=user)
                tg.inject_message(user["id"], "/handoff", from_user=user)
                await wait_for(lambda u=user: any("/resume" in x for x in tg.bot_texts(u["id"])))  # type: ignore[misc]
            bob_code = code_in(next(x for x in tg.bot_texts(77) if "/resume" in x))
            ann_code = code_in(next(x for x in tg.bot_texts(42) if "/resume" in x))
            tg.inject_message(-100555, f"/resume {bob_code}", from_user=bob)
            await wait_for(lambda: tg.bot_texts(-100555) == [t("en", "handoff_group_admin")])
            tg.inject_message(-100555, f"/resume {ann_code}", from_user=admin)
            await wait_for(lambda: len(tg.bot_texts(-100555)) == 2)
            assert tg.bot_texts(-100555)[1].startswith("Continued here: «our group plan» (messages: 2, files: 0)")
    finally:
        await tg.stop()
