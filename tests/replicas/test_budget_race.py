"""Budgets exact across replicas (issue 31): two apps on one PostgreSQL, 50 users writing at once against one
token budget of the agent. Each model request reserves its estimate in one conditional statement before it
is sent and settles what the provider reported after, so together the replicas never spend past the budget
(the estimates are conservative: they count the tool definitions, which the fake does not bill). Without the
reservation every one of the 50 would pass a read-then-check, as the first request of each chat sees the
budget untouched.

/usage then shows exactly the fake's reported usage × the price table, and pg_stat_statements counts one
quota statement per request on the answer's path (the settlements go in batches after it)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from bot.store.quotas import QuotaKey
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.postgres import PostgresServer
from tests.replicas.cluster import settled

USERS = 50
BUDGET = 10_000  # tokens a day for the agent: room for a quarter of the 50 answers (≈ 800 tokens each)
PRICE = {"input": 1000.0, "output": 5000.0}  # per million tokens
REFUSED = "Sorry, the bot's daily budget has not enough left for this request"


@pytest.fixture(scope="module")
def counted_postgres() -> Iterator[PostgresServer]:
    server = PostgresServer(("shared_preload_libraries=pg_stat_statements",))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def reported(fake: FakeOpenAI) -> list[tuple[int, int]]:
    """Each request's usage as the fake reports it: a quarter of the prompt's characters plus one, a token
    per streamed word."""
    out = []
    for r in fake.requests:
        prompt = sum(len(m.get("content") or "") for m in r["body"]["messages"]) // 4 + 1
        out.append((prompt, len(r["body"]["messages"][-1]["content"].split(" "))))
    return out


async def statements(conn: asyncpg.Connection, like: str) -> int:
    return int(await conn.fetchval("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE $1",
                                   like))


async def test_fifty_users_on_two_replicas_never_spend_past_the_budget(
        tmp_path: Path, counted_postgres: PostgresServer) -> None:
    fake = FakeOpenAI(first_token_delay=0.3)  # the requests overlap: all reservations race, settlements lag
    await fake.start()
    url = await counted_postgres.new_database()
    config = {"llm": {"prices": {"fake-model": PRICE}},
              "budgets": {"unit": "tokens", "agent": {"daily": BUDGET}, "admins_exempt": False,
                          "reserve_output_tokens": 16}}
    ra, rb = RecordingAdapter(), RecordingAdapter()
    chats = [f"c{n}" for n in range(USERS)]
    for name in "ab":
        (tmp_path / name).mkdir()
    db = await asyncpg.connect(url)
    try:
        await db.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        async with contextlib.AsyncExitStack() as stack:
            apps = [await stack.enter_async_context(running_app(
                tmp_path / name, fake.base_url, adapters=(rec,), config=config,
                env={"BOTHUB_DATABASE_URL": url, "BOTHUB_REPLICA_ID": name}))
                for name, rec in (("a", ra), ("b", rb))]
            await settled(*(app.store.claims for app in apps))
            assert {app.store.claims.holds(f"recording:{c}") for app in apps for c in chats} == {True, False}
            await db.execute("SELECT pg_stat_statements_reset()")

            def shown(chat: str) -> list[str]:
                return ra.texts(chat) + rb.texts(chat)

            # every user writes to replica a at once (b answers the chats it owns: the inbox routes them); the
            # refused write again, all at once, while a round still gets one of them answered
            waiting, answered, refusals, rounds = list(chats), 0, 0, 0
            while waiting:
                rounds += 1
                before = {c: len(shown(c)) for c in waiting}
                await asyncio.gather(*(ra.say(f"hello from {c}", c, user=f"u{chats.index(c)}") for c in waiting))
                await wait_for(lambda: all(len(shown(c)) > before[c] for c in waiting), within=60)  # noqa: B023
                for app in apps:
                    await app.hub.idle()
                    assert app.budgets is not None
                    await app.budgets.drain()  # the round's settlements are in: the next round sees them
                last = {c: shown(c)[-1] for c in waiting}
                refused = [c for c, text in last.items() if text.startswith(REFUSED)]
                assert all(text.split("\n")[0] == f"hello from {c}" for c, text in last.items() if c not in refused)
                refusals += len(refused)
                if len(refused) == len(waiting):
                    break
                answered += len(waiting) - len(refused)
                waiting = refused
            assert answered == len(fake.requests) and {bool(rec.visible) for rec in (ra, rb)} == {True}
            assert "It resets at " in shown(waiting[0])[-1]
            usage = reported(fake)
            spent = sum(p + c for p, c in usage)
            print(f"\nrace: {answered} answered, {refusals} refusals over {rounds} rounds, "
                  f"{spent} of {BUDGET} tokens spent")
            # never past the budget, and what is left is less than one more request needs (≈ 3 000 tokens with
            # the built-in skills' and skill_create's tool definitions)
            assert 5 <= answered < USERS and BUDGET - 3_500 < spent <= BUDGET

            # one conditional statement per request on the answer's path; refusals give back and read once
            reserve = await statements(db, "INSERT INTO quotas%")
            settle = await statements(db, "UPDATE quotas%")
            read_full = await statements(db, "SELECT scope, subject, period, start, used, quota FROM quotas%")
            print(f"quota statements: {reserve} reservations for {answered + refusals} requests, {settle} "
                  f"settlement rows, {read_full} reads for refusals")
            assert reserve == answered + refusals and read_full == refusals

            # the quota's row holds exactly what was used: every reservation settled to the fake's usage
            day = apps[0].usage.today().isoformat()
            row = await apps[0].store.quotas.states([QuotaKey("agent", "default", "day", day)])
            assert row[0].used == spent

            for app in apps:
                await app.usage.drain()  # /usage reads the store, plus what its own replica has not stored yet
            await ra.say("/usage all", chats[0], user="u0")
            await wait_for(lambda: any("cost" in text for text in shown(chats[0])[1:]))
            cost = sum(p * PRICE["input"] + c * PRICE["output"] for p, c in usage) / 1e6
            everyone = [line for line in "\n".join(shown(chats[0])[1:]).splitlines() if line.startswith("Everyone")]
            assert everyone == [f"Everyone: today {spent} tokens, cost {cost:.4f}; this month {spent} tokens, "
                                f"cost {cost:.4f}"]
    finally:
        await db.close()
        await fake.stop()
