"""/search inside one chat with 10⁵ stored messages, on SQLite (FTS5 trigram) and PostgreSQL (pg_trgm GIN).

The store holds 1 000 chats: one big chat of 20 000 messages (100 conversations) and 999 small ones of
about 80 messages, English and Chinese words mixed, so most words are common across the whole store. The
time is the store call `/search` makes (its reply is a few lines more), p50 and p95 over repeated runs.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path

from bench.common import Section, ms, percentile, run_standalone
from bot.store import Store
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from bot.tree.model import Conversation, Message, utc_now
from tests.postgres import PostgresServer

SMALL_CHATS, SMALL_MESSAGES = 999, 80
BIG_CONVERSATIONS, BIG_MESSAGES = 100, 200
RUNS, WARMUP = 30, 3
P95 = 0.100  # seconds
WORDS = ["weather", "report", "deploy", "python", "tree", "branch", "天气", "北京", "周报", "部署", "数据库", "分支"]
QUERIES = {
    "a word common everywhere (weather)": "weather",
    "two words (deploy python)": "deploy python",
    "a two-character Chinese word (天气: no trigram)": "天气",
    "a word this chat never used (zebra)": "zebra",
}


async def fill(store: Store) -> int:
    """10⁵ messages with counted ids; returns how many."""
    rng, now, serial = random.Random(11), utc_now(), 0

    async def conversation(chat: str, size: int) -> None:
        nonlocal serial
        conv = Conversation("", root_id=f"r{serial:07x}")
        for i in range(size):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 30)))
            conv.add_message(Message(f"{serial:08x}", "user" if i % 2 == 0 else "assistant", None, text, now))
            serial += 1
        await store.conversations.import_tree(chat, conv)

    for _ in range(BIG_CONVERSATIONS):
        await conversation("telegram:big", BIG_MESSAGES)
    for c in range(SMALL_CHATS):
        await conversation(f"telegram:{1000 + c}", SMALL_MESSAGES)
    return serial


async def timed(store: Store, chat: str, query: str) -> list[float]:
    times = []
    for i in range(WARMUP + RUNS):
        started = time.perf_counter()
        await store.housekeeping.search(chat, query)
        if i >= WARMUP:
            times.append(time.perf_counter() - started)
    return times


async def measure(sec: Section, name: str, store: Store) -> None:
    await store.open()
    try:
        total = await fill(store)
        for chat, label in (("telegram:big", "the 20 000-message chat"), ("telegram:1500", "an 80-message chat")):
            for what, query in QUERIES.items():
                times = await timed(store, chat, query)
                sec.check(f"{name}, {total:,} messages: {label}, {what}: p95", percentile(times, 95) * 1000,
                          P95 * 1000, "ms")
                sec.add(f"{name}: {label}, {what}: p50", ms(percentile(times, 50)))
    finally:
        await store.close()


async def run() -> Section:
    sec = Section("/search in one chat among 10⁵ stored messages")
    with tempfile.TemporaryDirectory() as d:
        await measure(sec, "SQLite", SqliteStore(Path(d) / "bothub.sqlite3"))
    server = PostgresServer()
    await asyncio.to_thread(server.start)
    try:
        await measure(sec, "PostgreSQL", PostgresStore(await server.new_database()))
    finally:
        await asyncio.to_thread(server.stop)
    sec.notes.append("PostgreSQL runs on this machine (fsync off, as in the tests). Each search reads at most "
                     "60 matching messages, newest first, and groups them by conversation.")
    return sec


if __name__ == "__main__":
    run_standalone(run)
