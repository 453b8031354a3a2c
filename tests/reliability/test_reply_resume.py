"""A reply cut by SIGKILL of a real `bothub run` mid-stream is completed after the restart by editing the
message already sent, on SQLite and on PostgreSQL; what was queued at the kill is answered once, in order."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sqlite3
from pathlib import Path

import asyncpg
import pytest

from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import answer_requests, wait_for
from tests.postgres import PostgresServer
from tests.reliability.test_process import running_bot, words, write_config

CHAT = 42


class Inbox:
    """Reads the inbox table the way an operator would, from outside the bot's process."""

    def __init__(self, sqlite_path: Path, url: str | None) -> None:
        self.sqlite_path = sqlite_path
        self.url = url
        self.rows: list[tuple[int, list[str]]] = []

    async def read(self) -> list[tuple[int, list[str]]]:
        """(entry id, platform ids of its reply's messages) of every unfinished entry; [] before migration."""
        if self.url is not None:
            conn = await asyncpg.connect(self.url)
            try:
                rows = await conn.fetch("SELECT id, replies FROM inbox ORDER BY id")
            except asyncpg.UndefinedTableError:
                return []
            finally:
                await conn.close()
            return [(row[0], list(row[1])) for row in rows]
        if not self.sqlite_path.exists():
            return []
        with contextlib.closing(sqlite3.connect(self.sqlite_path)) as db:
            try:
                found = db.execute("SELECT id, replies FROM inbox ORDER BY id").fetchall()
            except sqlite3.OperationalError:  # not migrated yet
                return []
        return [(entry, json.loads(replies)) for entry, replies in found]

    async def poll(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.rows = await self.read()
            await asyncio.sleep(0.05)


@pytest.mark.timeout(240)  # two `bothub run` processes one after the other, on a loaded machine
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_reply_cut_by_sigkill_is_completed_in_the_message_already_sent(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    long_answer, queued = words("w", 60), ["bravo2", "charlie3"]  # the slow model streams one word per 0.1 s
    slow, fast, tg = FakeOpenAI(words_delay=0.1), FakeOpenAI(), FakeTelegram()
    tg.refuse_drafts(CHAT)  # the reply streams by a send and edits, as in a group (test_a_draft_cut… for drafts)
    server: PostgresServer | None = request.getfixturevalue("postgres") if backend == "postgres" else None
    url = await server.new_database() if server is not None else None
    inbox = Inbox(tmp_path / "data" / "bothub.sqlite3", url)
    stop = asyncio.Event()
    for server in (slow, fast, tg):
        await server.start()
    env = tg.env
    if url is not None:
        env["BOTHUB_DATABASE_URL"] = url
    poller = asyncio.create_task(inbox.poll(stop))
    try:
        config = write_config(tmp_path)
        async with running_bot(config, slow, env) as bot:
            for question in (long_answer, *queued):
                tg.inject_message(CHAT, question)
            # streaming: the first message is out, edited at least once, and its id is stored with the entry
            await wait_for(lambda: len(inbox.rows) == 3 and bool(inbox.rows[0][1])
                           and any(m.edits for m in tg.messages(CHAT) if m.from_bot), within=60)
            bot.proc.send_signal(signal.SIGKILL)
            await bot.proc.wait()
        [cut] = [m for m in tg.messages(CHAT) if m.from_bot]
        assert inbox.rows[0][1] == [str(cut.message_id)]
        assert cut.text.startswith("w1 w2") and cut.text != long_answer, "the kill came after the answer ended"
        sends_before = len(tg.calls_of("sendMessage"))
        async with running_bot(config, fast, env):
            await wait_for(lambda: len(tg.bot_texts(CHAT)) == 3 and tg.bot_texts(CHAT)[0] == long_answer, within=60)
            await asyncio.sleep(0.5)  # room for a wrong second copy to show
        stop.set()
        await poller
        assert await inbox.read() == []
    finally:
        stop.set()
        await poller
        for server in (slow, fast, tg):
            await server.stop()
    bot_messages = [m for m in tg.messages(CHAT) if m.from_bot]
    assert [(m.message_id, m.text) for m in bot_messages] == [
        (cut.message_id, long_answer), *((m.message_id, q) for m, q in zip(bot_messages[1:], queued, strict=True))]
    # the cut reply was edited, not re-sent (a queued answer's send may be retried after a flood 429: the first
    # process's sends still count in the chat's window when the second one starts)
    assert [c["text"] for c in tg.calls_of("sendMessage")[sends_before:] if c["text"] not in queued] == []
    assert [r["body"]["messages"][-1]["content"] for r in answer_requests(fast)] == [long_answer, *queued]
    assert [r["body"]["messages"][-1]["content"] for r in answer_requests(slow)] == [long_answer]


@pytest.mark.timeout(240)
async def test_a_draft_cut_by_sigkill_is_answered_once_after_the_restart(tmp_path: Path) -> None:
    """A private chat's answer streams as a draft, which is no message: nothing of it is noted in the inbox, so
    the restart answers anew, in one message, and what was queued follows once, in order."""
    long_answer, queued = words("w", 60), ["bravo2", "charlie3"]
    slow, fast, tg = FakeOpenAI(words_delay=0.1), FakeOpenAI(), FakeTelegram()
    inbox = Inbox(tmp_path / "data" / "bothub.sqlite3", None)
    for server in (slow, fast, tg):
        await server.start()
    env = tg.env
    try:
        config = write_config(tmp_path)
        async with running_bot(config, slow, env) as bot:
            for question in (long_answer, *queued):
                tg.inject_message(CHAT, question)
            await wait_for(lambda: any(len(d.texts) >= 3 for d in tg.drafts_in(CHAT)), within=60)
            bot.proc.send_signal(signal.SIGKILL)
            await bot.proc.wait()
        rows = await inbox.read()
        assert len(rows) == 3 and rows[0][1] == []  # the draft was never noted as the reply's message
        assert tg.bot_texts(CHAT) == []  # and the chat has no message of the cut answer
        async with running_bot(config, fast, env):
            await wait_for(lambda: tg.bot_texts(CHAT) == [long_answer, *queued], within=60)
            await asyncio.sleep(0.5)  # room for a wrong second copy to show
        assert await inbox.read() == []
    finally:
        for server in (slow, fast, tg):
            await server.stop()
    assert tg.bot_texts(CHAT) == [long_answer, *queued] and tg.calls_of("editMessageText") == []
