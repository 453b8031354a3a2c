"""Between "answered" and "the platform has the final text": an orderly stop (SIGTERM of a real `bothub run`),
a replica's drain and a replica losing its claims all cut a reply whose final edit the fake holds. The inbox
entry must stay unfinished, and the reply be completed exactly once, in the message already sent, after the
restart or by the chat's next owner. (SIGKILL, which runs no cleanup, is test_reply_resume.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import answer_requests, wait_for
from tests.postgres import PostgresServer
from tests.reliability.test_process import running_bot, words, write_config
from tests.reliability.test_reply_resume import Inbox
from tests.replicas.cluster import Replica, replicas

CHAT = 42
ANSWER = words("w", 30)  # 3 s at one word per 0.1 s: sent early, edited on the way, then the final edit
GRACE = {"shutdown_grace": 1.0}  # a stop waits this long for runs, then cuts them


def hold_first_final_edit(tg: FakeTelegram) -> asyncio.Event:
    """The fake takes the reply's first final edit and never answers it: the platform never shows it."""
    taken: list[bool] = []

    def final_edit(method: str, params: dict[str, Any]) -> bool:
        if method != "editMessageText" or params.get("text") != ANSWER or taken:
            return False
        taken.append(True)
        return True

    return tg.hold(final_edit)


@contextlib.asynccontextmanager
async def platform(url: str | None, sqlite: Path) -> AsyncIterator[tuple[FakeTelegram, FakeOpenAI, Inbox]]:
    llm, tg = FakeOpenAI(words_delay=0.1), FakeTelegram()
    tg.refuse_drafts(CHAT)  # the reply streams by a send and edits, as in a group (a draft is never resumed)
    for server in (llm, tg):
        await server.start()
    try:
        yield tg, llm, Inbox(sqlite, url)
    finally:
        for server in (llm, tg):
            await server.stop()


async def held(tg: FakeTelegram, inbox: Inbox) -> list[tuple[int, list[str]]]:
    """Ask, and wait until the final edit is held: the run is over but for that one request."""
    tg.inject_message(CHAT, ANSWER)
    await wait_for(lambda: bool(tg.held), within=60)
    rows = await inbox.read()
    [cut] = [m for m in tg.messages(CHAT) if m.from_bot]
    assert rows == [(rows[0][0], [str(cut.message_id)])], "the entry waits, with the message it sent"
    assert cut.text != ANSWER
    return rows


async def completed_once(tg: FakeTelegram, inbox: Inbox, sends_before: int) -> None:
    """The one bot message comes to show the whole answer, by an edit; the entry is then finished."""
    await wait_for(lambda: tg.bot_texts(CHAT) == [ANSWER], within=60)
    deadline = asyncio.get_running_loop().time() + 20
    while await inbox.read():
        assert asyncio.get_running_loop().time() < deadline, "the completed entry was never finished"
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)  # room for a wrong second copy to show
    assert tg.bot_texts(CHAT) == [ANSWER]
    assert [c["text"] for c in tg.calls_of("sendMessage")[sends_before:]] == []


@pytest.mark.timeout(180)
async def test_sigterm_during_a_held_final_edit_leaves_the_entry_and_the_restart_completes_it(
        tmp_path: Path) -> None:
    config = write_config(tmp_path, **GRACE)
    async with platform(None, tmp_path / "data" / "bothub.sqlite3") as (tg, llm, inbox):
        env = tg.env
        hold_first_final_edit(tg)
        async with running_bot(config, llm, env) as bot:
            before = await held(tg, inbox)
            bot.proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(bot.proc.wait(), 30) == 0, "an orderly stop exits cleanly"
        assert await inbox.read() == before, "the cut reply's entry stays for the next start"
        sends = len(tg.calls_of("sendMessage"))
        async with running_bot(config, llm, env):
            await completed_once(tg, inbox, sends)
        assert len(answer_requests(llm)) == 2


async def owner(cluster: list[Replica], chat: str) -> Replica:
    """The replica answering `chat`."""
    for _ in range(200):
        for replica in cluster:
            if chat in (await replica.replica())["chats"]:
                return replica
        await asyncio.sleep(0.05)
    raise AssertionError(f"nobody owns {chat}")


async def terminate_claims(url: str, replica: str) -> None:
    """The database ends the replica's claims session (a failover, a network cut): its locks go with it."""
    conn = await asyncpg.connect(url)
    try:
        ended = await conn.fetchval("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                    "WHERE application_name = $1", f"bothub {replica}")
        assert ended == 1
    finally:
        await conn.close()


async def drain(victim: Replica, url: str) -> None:
    victim.proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(victim.proc.wait(), 30) == 0


async def lose_claims(victim: Replica, url: str) -> None:
    await terminate_claims(url, victim.name)
    await wait_for(lambda: "claims connection lost" in victim.log.read_text(), within=20)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("cut", [drain, lose_claims], ids=["drain", "claims_lost"])
async def test_a_replica_cut_during_a_held_final_edit_hands_the_reply_to_the_new_owner(
        tmp_path: Path, postgres: PostgresServer, cut: Callable[[Replica, str], Any]) -> None:
    url = await postgres.new_database()
    async with platform(url, tmp_path / "unused") as (tg, llm, inbox):
        env = tg.env
        hold_first_final_edit(tg)
        async with replicas(tmp_path, ("a", "b"), llm, url, env, GRACE) as cluster:
            before = await held(tg, inbox)
            victim = await owner(cluster, f"telegram:{CHAT}")
            sends = len(tg.calls_of("sendMessage"))
            await cut(victim, url)
            assert await inbox.read() == before, "the cut reply's entry waits for the chat's next owner"
            await completed_once(tg, inbox, sends)
        assert len(answer_requests(llm)) == 2, "the new owner asked the model once more, and only once"
