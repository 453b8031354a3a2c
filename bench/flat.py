"""Cost that stays flat: hub overhead per message and CPU per answer at 10 / 1 000 / 10 000 active chats and
10² / 10⁵ stored messages.

Each case is a fresh app (SQLite, agent loop, recording adapter, zero-latency fake LLM in its own process).
The store is filled first (filler conversations in chats of their own, so every active conversation has the
same short history); then each active chat says hello once (its session exists, or was evicted and must be
reloaded: the hub keeps 2 000 idle sessions); then MEASURED messages go to random active chats at a rate
well below capacity. Overhead = inbound → complete answer visible, minus the time spent waiting on the LLM
stream (bench/hub.py's method); CPU per answer = the process's CPU time over the measured messages / count.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import Section, fake_llm, median, percentile, run_standalone
from bench.hub import QUIET, TimedAdapter, time_llm
from bench.store import linear
from bot.messages import IncomingMessage
from bot.store.sqlite import SqliteStore
from tests.harness import running_app

ACTIVE = (10, 1_000, 10_000)
STORED = (100, 100_000)
FILLER = 100  # messages per filler conversation
MEASURED = 300
RATE = 60.0  # measured messages per second: well below the hub's capacity on this machine
WARM_BATCH = 50  # hellos in flight at once while the chats become active
LIMIT = 1.3  # largest / smallest, over all cases (performance round three: within 1.3 ×)


@dataclass
class Case:
    active: int
    stored: int
    overheads: list[float]
    cpu_per_answer: float


async def fill(db: Path, stored: int) -> None:
    store = SqliteStore(db)
    await store.open()
    try:
        for n in range(stored // FILLER):
            await store.conversations.import_tree(f"bench:filler{n}", linear(FILLER, seed=n))
    finally:
        await store.close()


async def measure(base_url: str, tmp: Path, active: int, stored: int) -> Case:
    (tmp / "data").mkdir(mode=0o700)
    await fill(tmp / "data" / "bothub.sqlite3", stored)
    adapter = TimedAdapter()
    rng = random.Random(active * 7 + stored)
    async with running_app(tmp, base_url, config=QUIET, adapters=(adapter,)) as app:
        llm = time_llm(app)
        assert adapter.on_message is not None
        for first in range(0, active, WARM_BATCH):  # not timed: a slow hello on a busy machine is no failure
            for c in range(first, min(active, first + WARM_BATCH)):
                await adapter.on_message(IncomingMessage(
                    platform=adapter.name, chat_id=f"a{c}", thread_id=None, message_id=f"hello{c}",
                    user_id=f"u{c}", user_name="Bench", is_group=False, mentioned=True, text=f"hello from chat {c}"))
            await app.hub.idle()
        for record in (adapter.sent, adapter.sent_final, adapter.edits, adapter.typings, adapter.visible):
            record.clear()  # what the fake platform recorded is not the hub's work
        asks: dict[str, asyncio.Task[tuple[float, float]]] = {}
        waiting: dict[int, asyncio.Task[tuple[float, float]]] = {}  # the adapter times one question per chat
        cpu = time.process_time()
        started = time.perf_counter()
        for n in range(MEASURED):
            await asyncio.sleep(max(0.0, started + n / RATE - time.perf_counter()))
            chat = rng.randrange(active)
            while chat in waiting and not waiting[chat].done():  # busy: wait for any answer, then pick again
                await asyncio.wait([t for t in waiting.values() if not t.done()], return_when=asyncio.FIRST_COMPLETED)
                chat = rng.randrange(active)
            text = f"chat {chat} asks question {n} about the weather"
            asks[text] = waiting[chat] = asyncio.create_task(adapter.ask(f"a{chat}", text))
        done = {text: await task for text, task in asks.items()}
        cpu = time.process_time() - cpu
    return Case(active, stored, [end - start - llm[text] for text, (start, end) in done.items()], cpu / MEASURED)


async def run() -> Section:
    sec = Section("Flat cost: hub overhead and CPU per answer against active chats and stored messages")
    cases: list[Case] = []
    async with fake_llm() as base_url:
        for stored in STORED:
            for active in ACTIVE:
                with tempfile.TemporaryDirectory() as d:
                    case = await measure(base_url, Path(d), active, stored)
                cases.append(case)
                sec.add(f"{active} active chats, {stored} stored: overhead p50 / p99, CPU per answer",
                        f"{median(case.overheads) * 1000:.2f} / {percentile(case.overheads, 99) * 1000:.2f} ms, "
                        f"{case.cpu_per_answer * 1000:.2f} ms")
    p50s = [median(c.overheads) for c in cases]
    cpus = [c.cpu_per_answer for c in cases]
    sec.check("overhead p50: largest / smallest case", max(p50s) / min(p50s), LIMIT, "×", fmt=".2f")
    sec.check("CPU per answer: largest / smallest case", max(cpus) / min(cpus), LIMIT, "×", fmt=".2f")
    sec.notes.append(f"{MEASURED} measured messages per case at {RATE:g} msg/s to random active chats; the fake LLM "
                     "answers at once (own process), so CPU is the hub's: gate, lane, store, prompt, streaming.")
    return sec


if __name__ == "__main__":
    run_standalone(run)
