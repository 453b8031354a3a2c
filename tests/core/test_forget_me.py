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
from bot.messages import Attachment
from bot.replies import Reply
from bot.store.forget import BY_CHAT
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


async def test_in_a_group_only_an_admin_may_and_it_erases_the_groups_record(tmp_path: Path, fake: FakeOpenAI) -> None:
    config = {"telegram": {"access": {"admins": ["1"], "group_policy": "open"}}}
    rec = RecordingAdapter()
    rec.name = "telegram"  # a platform with an access policy, so admins are named
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        await said(rec, app, "group plans", chat_id="g1", group=True, user="1")
        refused = await said(rec, app, "/forget-me", chat_id="g1", group=True, user="2")
        assert refused.text == t("en", "forget_group_admin")
        asked = await said(rec, app, "/forget-me", chat_id="g1", group=True, user="1")
        assert asked.text == t("en", "forget_ask_group")
        await said(rec, app, "/forget_me confirm", chat_id="g1", group=True, user="1")
        assert await app.store.conversations.recent(SessionKey("telegram", "g1").storage_key) == []
