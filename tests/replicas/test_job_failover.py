"""Reminders through the inbox: a replica SIGKILLed after its chats' reminders were queued, before it sent
them (its lanes busy with answers), loses none. Each due reminder is an inbox entry of its chat, so the
survivor takes it over with the chat and sends it exactly once; nothing waits for a claim to time out."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.messages import ChatRef
from bot.store import NewJob
from bot.store.postgres import PostgresStore
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import wait_for
from tests.postgres import PostgresServer
from tests.replicas.cluster import RoundRobin, behind_balancer, inbox_drained, timed_sends

CHATS = range(7100, 7108)
FAST = {"scheduler": {"poll": 0.5}}  # the test adds jobs through its own connection: look for them often


def _reminder(chat: int, due: datetime) -> NewJob:
    return NewJob(f"telegram:{chat}", None, "u1", "once", "in 3s", "UTC", due, f"pills for {chat}",
                  runs_agent=False, where=ChatRef("telegram", str(chat)), created_by_name="Li")


def _busy(body: dict[str, Any]) -> bool:
    return any("busy" in str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user")


@pytest.mark.timeout(240)
async def test_a_replica_killed_before_sending_its_queued_reminders_loses_none(
        tmp_path: Path, postgres: PostgresServer) -> None:
    llm, tg, balancer = FakeOpenAI(), FakeTelegram(), RoundRobin([])
    llm.hold, llm.hold_only = asyncio.Event(), _busy  # every chat's lane is busy with an answer at the due time
    sent_at = timed_sends(tg)
    for server in (llm, tg, balancer):
        await server.start()
    url = await postgres.new_database()
    store, db = PostgresStore(url), None
    try:
        async with behind_balancer(tmp_path, ("a", "b"), llm, tg, balancer, url, more=FAST) as (a, _):
            await store.open()
            db = await asyncpg.connect(url)
            for chat in CHATS:
                tg.inject_message(chat, f"busy {chat}")
            await wait_for(lambda: len(llm.requests) >= len(CHATS), 30)
            victim_chats = {int(s.split(":")[1]) for s in (await a.replica())["chats"]}
            assert victim_chats and victim_chats < set(CHATS), "both replicas should own some of the chats"
            due = datetime.now(UTC) + timedelta(seconds=2)
            jobs = {chat: (await store.jobs.add(_reminder(chat, due))).id for chat in CHATS}
            await _wait_for_rows(db, "SELECT count(*) FROM inbox WHERE job IS NOT NULL", len(CHATS))
            await asyncio.sleep(0.5)  # each run reaches its chat's owner and waits in its busy lane
            assert not any("pills" in text for chat in CHATS for text in tg.bot_texts(chat))
            a.kill()
            killed_at = time.monotonic()
            llm.hold.set()
            await tg.wait_until(lambda: all(_reminders(tg, c) for c in CHATS), 60)
            await inbox_drained(url)
            await tg.quiet(settle=1.0)
            rows = await db.fetch("SELECT id, last_result, claimed_at, next_due FROM jobs ORDER BY id")
    finally:
        if db is not None:
            await db.close()
        await store.close()
        for server in (balancer, tg, llm):
            await server.stop()
    assert {c: len(_reminders(tg, c)) for c in CHATS} == {c: 1 for c in CHATS}  # every one, exactly once
    assert [(r["id"], r["last_result"], r["claimed_at"], r["next_due"]) for r in rows] == [
        (jobs[c], "sent", None, None) for c in CHATS]
    taken = min(t for c in victim_chats for t in sent_at[c] if t > killed_at) - killed_at
    print(f"\nkill → first reminder of the killed replica's chats sent by the survivor: {taken * 1000:.0f} ms")


def _reminders(tg: FakeTelegram, chat: int) -> list[str]:
    return [text for text in tg.bot_texts(chat) if f"pills for {chat}" in text]


async def _wait_for_rows(db: asyncpg.Connection, sql: str, count: int, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while await db.fetchval(sql) < count:
        assert time.monotonic() < deadline, f"{sql}: fewer than {count}"
        await asyncio.sleep(0.05)
