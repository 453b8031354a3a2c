"""Store backends under the hub: capacity of one replica on SQLite and on PostgreSQL, CPU per message and
database round trips per answered message (durable inbox included), with a zero-latency fake LLM; then 1, 2
and 3 `bothub run` replicas on one PostgreSQL behind a round-robin balancer (Telegram webhooks), and the time
from a replica's SIGKILL (and from its SIGSTOP) to the survivor's first answer in one of its chats.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg

from bench.common import Section, fake_llm, median, ms, run_standalone
from bench.hub import QUIET, TimedAdapter, count_db_round_trips, question
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import running_app
from tests.postgres import PostgresServer
from tests.replicas import cluster

CHATS = 200
PER_CHAT = 10
SEQUENTIAL = 200
FIRST_CHAT = 9000
FAILOVER_PER_CHAT, FAILOVER_RATE = 10, 50.0  # messages per chat, per second, around the kill
REPLICA_CHATS, REPLICA_PER_CHAT = 1000, 2  # within Telegram's per-chat burst: the replicas are measured, not pacing
WARM_PAUSE = 3.0  # seconds between the chats' first answers and the measured messages: the per-chat budget refills
UNPACED = {"messages_per_second": 1000}  # as for a bot whose limit Telegram raised
_STATEMENTS_SQL = ("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements "
                   "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())")


@contextlib.contextmanager
def count_pg_round_trips() -> Iterator[list[int]]:
    """Counts statements sent through asyncpg, BEGIN/COMMIT and the pool's reset query included: one round trip
    each once the statement is prepared (asyncpg caches prepared statements per connection). `execute` with
    arguments runs through `_execute`, so only its argument-less form (a simple query) is counted itself."""
    counter = [0]
    originals = {name: getattr(asyncpg.Connection, name) for name in ("_execute", "execute", "executemany")}

    def counted(name: str, original: Any) -> Any:
        async def call(self: asyncpg.Connection, query: str, *args: Any, **kwargs: Any) -> Any:
            counter[0] += name != "execute" or not args
            return await original(self, query, *args, **kwargs)
        return call

    for name, original in originals.items():
        setattr(asyncpg.Connection, name, counted(name, original))
    try:
        yield counter
    finally:
        for name, original in originals.items():
            setattr(asyncpg.Connection, name, original)


async def _capacity(base_url: str, tmp: Path, env: dict[str, str]) -> tuple[float, float]:
    """CHATS clients each sending PER_CHAT messages in turn: (messages per second, CPU seconds per message)."""
    adapter = TimedAdapter()
    async with running_app(tmp, base_url, config=QUIET, adapters=(adapter,), env=env):
        await adapter.ask("warmup", "warm up the connection pool please")

        async def client(chat: int) -> None:
            for n in range(PER_CHAT):
                await adapter.ask(f"c{chat}", question(chat, n))

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(client(c) for c in range(CHATS)))
        wall, used = time.perf_counter() - started, time.process_time() - cpu
    return CHATS * PER_CHAT / wall, used / (CHATS * PER_CHAT)


async def _sequential(base_url: str, tmp: Path, env: dict[str, str], counter: Any) -> tuple[float, float]:
    """One chat, one message at a time: (latency p50, database round trips per answered message)."""
    adapter = TimedAdapter()
    async with running_app(tmp, base_url, config=QUIET, adapters=(adapter,), env=env):
        await adapter.ask("one", "the first message creates the conversation")
        latencies = []
        with counter() as trips:
            for n in range(SEQUENTIAL):
                start, end = await adapter.ask("one", question(0, n))
                latencies.append(end - start)
    return median(latencies), trips[0] / SEQUENTIAL


async def _replicas(server: PostgresServer, count: int) -> tuple[float, list[float], float, float]:
    """REPLICA_CHATS × REPLICA_PER_CHAT messages at once into `count` replicas, in steady state (each chat opened
    by a first message, answered before the measured ones): (messages per second, CPU seconds per message of each
    replica over the messages it answered, statements per message (pg_stat_statements), the share of a core this
    process (the fakes and the balancer) used meanwhile)."""
    llm, tg, balancer = FakeOpenAI(), FakeTelegram(), cluster.RoundRobin([])
    tg.flood = None  # measure the replicas, not the fake's global limit
    for fake in (llm, tg, balancer):
        await fake.start()
    url, total = await server.new_database(), REPLICA_CHATS * REPLICA_PER_CHAT
    chats = range(FIRST_CHAT, FIRST_CHAT + REPLICA_CHATS)
    db = await asyncpg.connect(url)
    try:
        await db.execute("CREATE EXTENSION pg_stat_statements")
        with tempfile.TemporaryDirectory() as d:
            names = tuple(f"r{n}" for n in range(count))
            async with cluster.behind_balancer(Path(d), names, llm, tg, balancer, url, UNPACED) as replicas:
                for chat in chats:  # opened: its session, conversation and settings exist, as for a chat in use
                    tg.inject_message(chat, cluster.question(chat, -1))
                await tg.wait_until(lambda: len(tg.calls_of("sendMessage")) >= len(chats), within=900)
                await asyncio.sleep(WARM_PAUSE)
                opened = len(tg.calls_of("sendMessage"))
                await db.execute("SELECT pg_stat_statements_reset()")
                statements, cpu = await db.fetchval(_STATEMENTS_SQL), [r.cpu_seconds() for r in replicas]
                started, own_cpu = time.perf_counter(), time.process_time()
                for chat, n in cluster.rounds(chats, REPLICA_PER_CHAT):
                    tg.inject_message(chat, cluster.question(chat, n))
                await tg.wait_until(lambda: len(tg.calls_of("sendMessage")) >= opened + total, within=900)
                wall = time.perf_counter() - started
                fakes = (time.process_time() - own_cpu) / wall
                used = [r.cpu_seconds() - c for r, c in zip(replicas, cpu, strict=True)]
                statements = await db.fetchval(_STATEMENTS_SQL) - statements
    finally:
        await db.close()
        for fake in (balancer, tg, llm):
            await fake.stop()
    return total / wall, [u / (total / count) for u in used], float(statements) / total, fakes


async def _failover(server: PostgresServer, freeze: bool = False) -> float:
    """Two replicas under steady traffic; one is SIGKILLed (or SIGSTOPped) halfway: seconds to the survivor's
    first answer in a chat the killed (frozen) one owned."""
    llm, tg, balancer = FakeOpenAI(), FakeTelegram(), cluster.RoundRobin([], upstream_timeout=2.0)
    tg.flood = None
    sent_at = cluster.timed_sends(tg)
    chats = range(FIRST_CHAT, FIRST_CHAT + CHATS)
    for fake in (llm, tg, balancer):
        await fake.start()
    url = await server.new_database()
    try:
        with tempfile.TemporaryDirectory() as d:
            async with cluster.behind_balancer(Path(d), ("a", "b"), llm, tg, balancer, url) as (a, _):
                killed_at, orphaned = await (
                    cluster.send_with_a_freeze(tg, chats, FAILOVER_PER_CHAT, FAILOVER_RATE, a, url) if freeze
                    else cluster.send_with_a_kill(tg, chats, FAILOVER_PER_CHAT, FAILOVER_RATE, a, url))
                await tg.wait_until(lambda: len(tg.calls_of("sendMessage")) >= CHATS * FAILOVER_PER_CHAT, 300)
    finally:
        for fake in (balancer, tg, llm):
            await fake.stop()
    return cluster.failover_time(sent_at, killed_at, orphaned)


async def run() -> Section:
    sec = Section("Store backends and replicas: SQLite, PostgreSQL, 1-3 replicas (zero-latency fake LLM)")
    server = PostgresServer(("shared_preload_libraries=pg_stat_statements",))
    await asyncio.to_thread(server.start)
    try:
        async with fake_llm() as base_url:
            for name, counter in (("SQLite", count_db_round_trips), ("PostgreSQL", count_pg_round_trips)):
                with tempfile.TemporaryDirectory() as d:
                    env = {"BOTHUB_DATABASE_URL": await server.new_database()} if name == "PostgreSQL" else {}
                    rate, cpu = await _capacity(base_url, Path(d), env)
                with tempfile.TemporaryDirectory() as d:
                    env = {"BOTHUB_DATABASE_URL": await server.new_database()} if name == "PostgreSQL" else {}
                    latency, trips = await _sequential(base_url, Path(d), env, counter)
                sec.add(f"{name}: {CHATS * PER_CHAT} messages from {CHATS} chats, throughput", f"{rate:.0f} msg/s")
                sec.add(f"{name}: hub process CPU per message", ms(cpu))
                sec.add(f"{name}: one chat, sequential: latency p50", ms(latency))
                sec.add(f"{name}: database round trips per answered message", f"{trips:.1f}")
        for count in (1, 2, 3):
            rate, cpu, statements, fakes = await _replicas(server, count)
            label = f"{count} replica{'s' if count > 1 else ''} (bothub run, Telegram webhooks)"
            sec.add(f"{label}: {REPLICA_CHATS * REPLICA_PER_CHAT} messages from {REPLICA_CHATS} chats, throughput",
                    f"{rate:.0f} msg/s")
            sec.add(f"{label}: CPU per message, each replica", " / ".join(ms(c) for c in cpu))
            sec.check(f"{label}: database statements per answered message, steady state", statements, 3.5, "")
            sec.add(f"{label}: the fakes' and balancer's process, share of one core", f"{fakes:.0%}")
        sec.add("2 replicas: SIGKILL → first answer by the survivor in a chat the killed one owned",
                ms(await _failover(server)), "≤ 3 s")
        sec.add("2 replicas: SIGSTOP → first answer by the survivor in a chat the frozen one owned",
                ms(await _failover(server, freeze=True)), "≤ 6 s")
    finally:
        await asyncio.to_thread(server.stop)
    sec.notes.append("PostgreSQL runs on this machine (fsync off, as in the tests) and shares its 2 cores with the "
                     "hub; its own CPU is not in the hub's CPU per message. Round trips: SQLite counts hops to the "
                     "database thread; PostgreSQL counts statements sent by asyncpg (BEGIN, COMMIT and the pool's "
                     "reset query included). The answer is short and sent whole, so no reply ids are noted: a "
                     "reply streamed past the first-send grace costs one round trip more.")
    sec.notes.append("Replicas: each is a `bothub run` process behind a round-robin balancer; the fake Telegram's "
                     "flood limits are off and `telegram.messages_per_second` is 1000 (as for a bot whose limit "
                     "Telegram raised; at the default 30 one replica tops out at ~25 msg/s); 2 messages per chat stay "
                     "inside the per-chat burst. PostgreSQL, the fakes and every replica share the 2 cores. CPU per "
                     "message is each process's user+system CPU over the messages it answered (an even share). "
                     "Statements per message are all statements the database ran (pg_stat_statements), the "
                     "replicas' once-a-second sweeps and heartbeats included. Failover: the kill lands "
                     "between two replies of the killed replica (README, Scaling out); the frozen replica's "
                     "heartbeat stops, a survivor ends its claims connection after 3.5 s and takes its chats.")
    return sec


if __name__ == "__main__":
    run_standalone(run)
