"""Hub throughput and overhead: the real app (SQLite, agent loop, openai SDK) with a recording adapter.

Overhead per message = (inbound → complete answer visible) − (time spent awaiting the LLM stream).
The LLM time is measured by a thin wrapper around `LLMClient.stream` that adds up only the waits for
the next chunk, so the hub's own work between chunks is counted as hub time. The fake LLM runs in its
own process (zero latency, echoes the message), so its CPU does not compete with the hub's.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from adapters.console.adapter import ConsoleAdapter
from bench.common import Section, fake_llm, median, ms, percentile, run_standalone
from bot.adapter import Capabilities
from bot.app import App
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply
from bot.store.sqlite.database import Database
from tests.harness import RecordingAdapter, running_app

CHATS = 200
PER_CHAT = 10
PACED_RATE = 100.0  # msg/s offered in the paced run: busy, but below what one event loop can carry
CONSOLE_MESSAGES = 300
QUIET = {"log_level": "WARNING"}
# The console adapter's own capabilities: its streaming edits are throttled to one per 50 ms.
CONSOLE_CAPS = ConsoleAdapter.capabilities


class TimedAdapter(RecordingAdapter):
    """Notes when each chat first shows the complete expected answer (the fake LLM echoes the question)."""

    def __init__(self, capabilities: Capabilities | None = None) -> None:
        super().__init__(capabilities)
        self._waiting: dict[str, tuple[str, asyncio.Future[float]]] = {}

    def _seen(self, chat: ChatRef, reply: Reply) -> None:
        pending = self._waiting.get(chat.chat_id)
        if pending is not None and reply.text == pending[0] and not pending[1].done():
            pending[1].set_result(time.perf_counter())

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        ref = await super().send(chat, reply, final=final)
        self._seen(chat, reply)
        return ref

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        await super().edit(ref, reply, final=final)
        self._seen(ref.chat, reply)

    async def ask(self, chat_id: str, text: str, within: float = 30.0) -> tuple[float, float]:
        """Inject one message and wait (up to `within` seconds) for its complete answer: (inbound time, answer
        time)."""
        assert self.on_message is not None
        done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiting[chat_id] = (text, done)
        self._next += 1
        msg = IncomingMessage(platform=self.name, chat_id=chat_id, thread_id=None, message_id=f"in{self._next}",
                              user_id=f"u{chat_id}", user_name="Bench", is_group=False, mentioned=True, text=text)
        start = time.perf_counter()
        await self.on_message(msg)
        return start, await asyncio.wait_for(done, within)


def time_llm(app: App) -> dict[str, float]:
    """Wrap the app's LLM client: per user text, the seconds spent waiting on the model's stream."""
    waited: dict[str, float] = {}
    original = app.llm.stream

    async def timed(messages: list[dict[str, Any]], *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        key = str(messages[-1].get("content"))
        total = 0.0
        stream = original(messages, *args, **kwargs)
        while True:
            started = time.perf_counter()
            try:
                item = await anext(stream)
            except StopAsyncIteration:
                break
            finally:
                total += time.perf_counter() - started
                waited[key] = total
            yield item

    app.llm.stream = timed  # type: ignore[method-assign]
    return waited


def question(chat: int, n: int) -> str:
    return f"chat {chat} asks question number {n} about the weather"


async def many_chats(base_url: str, tmp: Path) -> tuple[float, list[float], list[float]]:
    """CHATS concurrent clients, each sending PER_CHAT messages one after another; returns (wall, overheads, llm)."""
    adapter = TimedAdapter()
    async with running_app(tmp, base_url, config=QUIET, adapters=(adapter,)) as app:
        llm = time_llm(app)
        await adapter.ask("warmup", "warm up the connection pool please")
        latencies: dict[str, float] = {}

        async def client(chat: int) -> None:
            for n in range(PER_CHAT):
                text = question(chat, n)
                start, end = await adapter.ask(f"c{chat}", text)
                latencies[text] = end - start

        started = time.perf_counter()
        await asyncio.gather(*(client(c) for c in range(CHATS)))
        wall = time.perf_counter() - started
    overheads = [latencies[k] - llm[k] for k in latencies]
    return wall, overheads, [llm[k] for k in latencies]


async def paced_chats(base_url: str, tmp: Path) -> tuple[list[float], list[float]]:
    """The same 2 000 messages over 200 chats, offered at PACED_RATE: per-message overhead without the
    queueing a saturated run adds. Returns (overheads, llm times)."""
    adapter = TimedAdapter()
    async with running_app(tmp, base_url, config=QUIET, adapters=(adapter,)) as app:
        llm = time_llm(app)
        await adapter.ask("warmup", "warm up the connection pool please")
        started = time.perf_counter()
        asks: dict[str, asyncio.Task[tuple[float, float]]] = {}
        for n in range(CHATS * PER_CHAT):
            await asyncio.sleep(max(0.0, started + n / PACED_RATE - time.perf_counter()))
            text = question(n % CHATS, n // CHATS)
            asks[text] = asyncio.create_task(adapter.ask(f"c{n % CHATS}", text))
        done = {text: await task for text, task in asks.items()}
    return [end - start - llm[text] for text, (start, end) in done.items()], [llm[text] for text in done]


@contextlib.contextmanager
def count_db_round_trips() -> Iterator[list[int]]:
    """Counts operations handed to the database thread: each is one cross-thread round trip."""
    counter = [0]
    original = Database._call

    async def counted(self: Database, fn: Any, *args: Any) -> Any:
        counter[0] += 1
        return await original(self, fn, *args)

    Database._call = counted  # type: ignore[method-assign]
    try:
        yield counter
    finally:
        Database._call = original  # type: ignore[method-assign]


async def console_path(base_url: str, tmp: Path) -> tuple[list[float], list[float], list[float], float]:
    """One chat, one message at a time, console capabilities: (overheads, llm times, latencies, db hops/msg)."""
    adapter = TimedAdapter(CONSOLE_CAPS)
    adapter.name = "console"
    async with running_app(tmp, base_url, config=QUIET, adapters=(adapter,)) as app:
        llm = time_llm(app)
        overheads, llm_times, latencies = [], [], []
        await adapter.ask("local", "the first message creates the conversation")
        with count_db_round_trips() as hops:
            for n in range(CONSOLE_MESSAGES):
                text = question(0, n)
                start, end = await adapter.ask("local", text)
                latencies.append(end - start)
                llm_times.append(llm[text])
                overheads.append(end - start - llm[text])
    return overheads, llm_times, latencies, hops[0] / CONSOLE_MESSAGES


async def run() -> Section:
    sec = Section("Hub: throughput and overhead (zero-latency fake LLM over loopback)")
    async with fake_llm() as base_url:
        with tempfile.TemporaryDirectory() as d:
            wall, overheads, llm_times = await many_chats(base_url, Path(d))
        total = CHATS * PER_CHAT
        sec.add(f"{total} messages from {CHATS} chats: throughput", f"{total / wall:.0f} msg/s")
        sec.add("  wall time", f"{wall:.2f} s")
        sec.add("  LLM round trip p50", ms(median(llm_times)))
        sec.add("  latency beyond the LLM p50 / p99 (saturated: queueing)",
                f"{ms(median(overheads))} / {ms(percentile(overheads, 99))}")
        with tempfile.TemporaryDirectory() as d:
            p_over, p_llm = await paced_chats(base_url, Path(d))
        sec.add(f"{total} messages from {CHATS} chats offered at {PACED_RATE:g} msg/s: LLM round trip p50",
                ms(median(p_llm)))
        sec.check("  hub overhead p50 (paced)", median(p_over) * 1000, 1, "ms", fmt=".2f")
        sec.check("  hub overhead p99 (paced)", percentile(p_over, 99) * 1000, 5, "ms", fmt=".2f")
        with tempfile.TemporaryDirectory() as d:
            c_over, c_llm, c_lat, hops = await console_path(base_url, Path(d))
    sec.add(f"console path, {CONSOLE_MESSAGES} sequential messages: latency p50", ms(median(c_lat)))
    sec.add("  LLM round trip p50", ms(median(c_llm)))
    sec.check("  hub overhead p50 (console path)", median(c_over) * 1000, 1, "ms", fmt=".2f")
    sec.check("  hub overhead p99 (console path)", percentile(c_over, 99) * 1000, 5, "ms", fmt=".2f")
    sec.add("  SQLite thread round trips per message", f"{hops:.1f}")
    tenth = CONSOLE_MESSAGES // 10
    sec.add("  overhead p50, first vs last 10 % (history growth)",
            f"{ms(median(c_over[:tenth]))} / {ms(median(c_over[-tenth:]))}")
    sec.notes.append("The saturated run (200 chats, each sending its next message as soon as it has an answer) "
                     "measures capacity: its latency is mostly waiting behind the other chats. The paced run "
                     "offers the same messages at a fixed rate below capacity: its overhead is the hub's own time.")
    return sec


if __name__ == "__main__":
    run_standalone(run)
