"""/forget-me through the real hub: it asks first, then erases everything the chat holds — rows in every table
that names the chat (scanned in the SQLite file itself, the full-text index too), the chat's folder — answers
with a receipt, writes the audit log, and the next message starts from nothing; groups need an admin;
`bothub forget --chat` does the same from the command line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.app import App
from bot.chats.sessions import SessionKey
from bot.i18n import t
from bot.messages import Attachment, Overheard
from bot.replies import Reply
from bot.store.forget import BY_CHAT, ERASED
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app

KEY = SessionKey("recording", "c1").storage_key


async def said(rec: RecordingAdapter, app: App, text: str, **extra: object) -> Reply:
    await rec.say(text, **extra)  # type: ignore[arg-type]
    await app.hub.idle()
    return [reply for chat, reply in rec.visible.values() if chat.chat_id == extra.get("chat_id", "c1")][-1]


def rows_left(database: Path, chat: str) -> dict[str, int]:
    with sqlite3.connect(database) as db:
        left = {table: db.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", (chat,)).fetchone()[0]
                for table, column in BY_CHAT}
        left["messages_fts"] = db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?",
                                          ('"tangerine"',)).fetchone()[0]
    return {table: n for table, n in left.items() if n}


async def test_forget_me_erases_the_chat_and_says_what_went(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    assert rec.files is not None
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        rec.files.served["h1"] = b"the tangerine plan\n"
        fake.script(ToolCalls([("m1", "remember", '{"content": "likes tangerines"}')]), Text("Noted."))
        await said(rec, app, "remember that I like tangerine",
                   attachments=(Attachment("file", "plan.txt", "text/plain", None, "h1"),))
        await said(rec, app, "/remind 2099-01-01 09:00 tangerine day")
        folder = app.hub.runner.workdir(app.lanes.session(SessionKey("recording", "c1")))
        assert any(folder.rglob("*plan*")) and rows_left(app.cfg.data_dir / "bothub.sqlite3", KEY)

        ask = await said(rec, app, "/forget-me")
        assert ask.text == t("en", "forget_ask") and ask.buttons[0][0].action == "/forget_me confirm"
        done = await said(rec, app, "/forget-me confirm")
        assert done.text.startswith("Erased. What went:\n") and "- messages: " in done.text
        assert "- memories: 1" in done.text and "- jobs: 1" in done.text and "- files: 1" in done.text
        assert rows_left(app.cfg.data_dir / "bothub.sqlite3", KEY) == {}
        assert not folder.exists()
        [audit] = [a for a in await app.store.dashboard.list_audit() if a.action == "forget"]
        assert audit.target == KEY and audit.actor == "recording:u1"

        fake.script(Text("Hello, who are you?"))
        await said(rec, app, "hi again")
        history = fake.requests[-1]["body"]["messages"]
        assert not any("tangerine" in str(m["content"]) for m in history)  # nothing of before reaches the model


async def test_in_a_group_only_an_admin_may_erase_the_groups_record(tmp_path: Path, fake: FakeOpenAI) -> None:
    config = {"telegram": {"access": {"admins": ["1"], "group_policy": "open"}}}
    rec = RecordingAdapter()
    rec.name = "telegram"  # a platform with an access policy, so admins are named
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        await said(rec, app, "group plans", chat_id="g1", group=True, user="1")
        refused = await said(rec, app, "/forget-me group", chat_id="g1", group=True, user="2")
        assert refused.text == t("en", "forget_group_admin")
        asked = await said(rec, app, "/forget-me group", chat_id="g1", group=True, user="1")
        assert asked.text == t("en", "forget_ask_group") and asked.buttons[0][0].action == "/forget_me group confirm"
        await said(rec, app, "/forget_me group confirm", chat_id="g1", group=True, user="1")
        assert await app.store.conversations.recent(SessionKey("telegram", "g1").storage_key) == []
        assert (await said(rec, app, "/forget_me group")).text == t("en", "usage", usage="/forget_me [group] [confirm]")


async def test_a_member_erases_their_own_part_of_a_group_and_nothing_of_the_others(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    assert rec.files is not None
    group = SessionKey("recording", "g1").storage_key
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        assert rec.on_message is not None
        rec.files.served["h1"] = b"the tangerine plan\n"
        await said(rec, app, "Ann says apricot", chat_id="g1", group=True, user="ann")
        fake.script(Text("Noted."))  # the bot's answer is the group's record, and says nothing of Bob's words here
        await said(rec, app, "my secret is tangerine", chat_id="g1", group=True, user="bob",
                   attachments=(Attachment("file", "plan.txt", "text/plain", None, "h1"),))
        await rec.on_message(Overheard("recording", "g1", None, "o1", "bob", "User bob", "tangerine again"))
        await rec.on_message(Overheard("recording", "g1", None, "o2", "ann", "User ann", "apricot again"))
        folder = app.hub.runner.workdir(app.lanes.session(SessionKey("recording", "g1")))
        assert any(folder.rglob("*plan*"))

        asked = await said(rec, app, "/forget-me", chat_id="g1", group=True, user="bob")  # no admin needed
        assert asked.text == t("en", "forget_ask_own") and asked.buttons[0][0].action == "/forget_me confirm"
        done = await said(rec, app, "/forget_me confirm", chat_id="g1", group=True, user="bob")
        assert "- messages: 1" in done.text and "- group_context: 1" in done.text and "- files: 1" in done.text
        assert "- traces: 1" in done.text
        assert not any(folder.rglob("*plan*"))
        with sqlite3.connect(app.cfg.data_dir / "bothub.sqlite3") as db:
            contents = [r[0] for r in db.execute("SELECT content FROM messages WHERE chat = ? AND role = 'user' "
                                                 "ORDER BY seq", (group,))]
            heard = [r[0] for r in db.execute("SELECT text FROM group_context WHERE chat = ?", (group,))]
            indexed = db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?",
                                 ('"tangerine"',)).fetchone()[0]
        assert contents == ["[User ann] Ann says apricot", ERASED]  # the others' words stay, theirs are gone
        assert heard == ["apricot again"] and indexed == 0
        [audit] = [a for a in await app.store.dashboard.list_audit() if a.action == "forget"]
        assert audit.actor == "recording:bob" and audit.target == f"{group} (own part)"

        await said(rec, app, "what do we know?", chat_id="g1", group=True, user="ann")
        history = str(fake.requests[-1]["body"]["messages"])
        assert "tangerine" not in history and "apricot" in history  # the model reads Ann, not Bob
