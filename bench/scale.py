"""Store backends under the hub: capacity of one replica on SQLite and on PostgreSQL, CPU per message and
database round trips per answered message (durable inbox included), with a zero-latency fake LLM.

Several replicas on one PostgreSQL are not built yet; this measures the single-replica baseline they start from.
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
from tests.harness import running_app
from tests.postgres import PostgresServer

CHATS = 200
PER_CHAT = 10
SEQUENTIAL = 200


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


async def run() -> Section:
    sec = Section("Store backends: one replica on SQLite and on PostgreSQL (zero-latency fake LLM)")
    server = PostgresServer()
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
    finally:
        await asyncio.to_thread(server.stop)
    sec.notes.append("PostgreSQL runs on this machine (fsync off, as in the tests) and shares its 2 cores with the "
                     "hub; its own CPU is not in the hub's CPU per message. Round trips: SQLite counts hops to the "
                     "database thread; PostgreSQL counts statements sent by asyncpg (BEGIN, COMMIT and the pool's "
                     "reset query included). The answer is short and sent whole, so no reply ids are noted: a "
                     "reply streamed past the first-send grace costs one round trip more.")
    return sec


if __name__ == "__main__":
    run_standalone(run)
