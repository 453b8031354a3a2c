"""`recall` by meaning over 10⁵ memories, on SQLite (sqlite-vec) and PostgreSQL (REAL[] dot product in SQL).

All 100 000 memories are in one chat, the worst case (a chat's memories are what recall ranks), each with a
1 536-float unit embedding (the width of common embedding models), plus 1 000 memories in another chat. The
time is the store call `recall` makes once the query is embedded (the provider's round trip is not ours),
p50 and p95 over repeated runs with different query vectors.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
import tempfile
import time
from datetime import datetime
from pathlib import Path

import asyncpg

from bench.common import Section, ms, percentile, run_standalone
from bot.store import Store
from bot.store.memories import CANDIDATES, RERANK, SKETCH, pack, sketch, unit
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from bot.tree.model import utc_now
from tests.postgres import PostgresServer

MEMORIES, OTHER = 100_000, 1_000
DIMENSIONS = 1536
DISTINCT = 500  # vectors made once and reused: making 10⁵ random 1 536-float vectors would be most of the run
RUNS, WARMUP = 50, 5
P95 = 0.020  # seconds


Stored = tuple[list[float], list[float]]  # an embedding and its sketch


def rows(vectors: list[Stored]) -> list[tuple[str, str, str, Stored]]:
    """(chat, content, created_at, (embedding, sketch)): the big chat's memories, then the other chat's."""
    now = utc_now().isoformat()
    return [(chat, f"memory {i}", now, vectors[i % DISTINCT])
            for chat, count in (("telegram:big", MEMORIES), ("telegram:other", OTHER)) for i in range(count)]


def fill_sqlite(path: Path, vectors: list[Stored]) -> None:
    """Bulk rows in one transaction: `add` numbers each memory by counting the chat's, fine one at a time but
    quadratic for 10⁵ in a row."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        packed = {id(v): (pack(v[0]), pack(v[1])) for v in vectors}
        db.executemany("INSERT INTO memories (chat, type, tags, content, created_at, embedding, sketch) "
                       "VALUES (?, 'fact', '[]', ?, ?, ?, ?)",
                       [(chat, content, at, *packed[id(v)]) for chat, content, at, v in rows(vectors)])


async def fill_postgres(url: str, vectors: list[Stored]) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.copy_records_to_table(
            "memories", columns=["chat", "type", "tags", "content", "created_at", "embedding", "sketch"],
            records=[(chat, "fact", [], content, datetime.fromisoformat(at), *v)
                     for chat, content, at, v in rows(vectors)])
    finally:
        await conn.close()


async def timed(sec: Section, name: str, store: Store, rng: random.Random) -> None:
    await store.open()
    try:
        times = []
        for i in range(WARMUP + RUNS):
            query = unit([rng.gauss(0, 1) for _ in range(DIMENSIONS)])
            begun = time.perf_counter()
            found = await store.memories.nearest("telegram:big", query, 10, min_similarity=-1.0)
            if i >= WARMUP:
                times.append(time.perf_counter() - begun)
            assert len(found) == 10 and {e.chat for e in found} == {"telegram:big"}
        sec.check(f"{name}, {MEMORIES:,} memories in the chat: recall by meaning, p95", percentile(times, 95) * 1000,
                  P95 * 1000, "ms")
        sec.add(f"{name}: recall by meaning, p50", ms(percentile(times, 50)))
    finally:
        await store.close()


async def migrated(store: Store) -> None:
    await store.open()
    await store.close()


async def run() -> Section:
    sec = Section("recall by meaning over 10⁵ memories")
    rng = random.Random(35)
    embeddings = [unit([rng.gauss(0, 1) for _ in range(DIMENSIONS)]) for _ in range(DISTINCT)]
    vectors = [(e, sketch(e)) for e in embeddings]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bothub.sqlite3"
        await migrated(SqliteStore(path))
        await asyncio.to_thread(fill_sqlite, path, vectors)
        await timed(sec, "SQLite", SqliteStore(path), rng)
    server = PostgresServer()
    await asyncio.to_thread(server.start)
    try:
        url = await server.new_database()
        await migrated(PostgresStore(url))
        await fill_postgres(url, vectors)
        await timed(sec, "PostgreSQL", PostgresStore(url), rng)
    finally:
        await asyncio.to_thread(server.stop)
    sec.notes.append(f"Each recall ranks the chat's newest {CANDIDATES:,} embedded memories (a bounded scan) by "
                     f"{SKETCH}-float sketches, then the best {RERANK} by the whole embedding; "
                     "min_similarity is off so every call returns 10 rows and marks them used, as recall does.")
    return sec


if __name__ == "__main__":
    run_standalone(run)
