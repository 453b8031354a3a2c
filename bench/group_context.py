"""Group context: the cost of one un-addressed group message (hub CPU, database round trips, latency) on SQLite
and PostgreSQL, fresh and after 50 000 earlier messages (it must not grow), and what the block adds to a prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg

from bench.common import Section, fake_llm, ms, run_standalone
from bench.hub import QUIET, count_db_round_trips
from bot.agent.tokens import estimate_tokens
from bot.app import App
from bot.messages import Overheard
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app
from tests.postgres import PostgresServer

CHATS = 100
MEASURED = 3000
HISTORY = 50_000
LINE = "did anyone look at the release notes? the migration step changed again"  # 71 characters
TYPICAL = [  # a realistic mix of English and Chinese chat lines
    "morning all", "the build on main is red again", "我刚看了一下，是依赖版本的问题", LINE,
    "can someone review #482 before lunch?", "好的，我下午处理", "lol", "meeting moved to 3pm",
]


@contextlib.contextmanager
def count_pg_statements() -> Iterator[list[int]]:
    """Statements asyncpg sends (each one round trip once prepared): `_execute` carries every statement with
    arguments (fetch*, execute with args); `execute` without arguments is a simple query of its own."""
    counter = [0]
    execute, simple = asyncpg.Connection._execute, asyncpg.Connection.execute

    async def counted_execute(self: asyncpg.Connection, *args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return await execute(self, *args, **kwargs)

    async def counted_simple(self: asyncpg.Connection, query: str, *args: Any, **kwargs: Any) -> Any:
        counter[0] += 0 if args else 1
        return await simple(self, query, *args, **kwargs)

    asyncpg.Connection._execute, asyncpg.Connection.execute = counted_execute, counted_simple  # type: ignore[method-assign]
    try:
        yield counter
    finally:
        asyncpg.Connection._execute, asyncpg.Connection.execute = execute, simple  # type: ignore[method-assign]


class Talk:
    def __init__(self, adapter: RecordingAdapter) -> None:
        assert adapter.on_message is not None
        self.handle, self.name, self.sent = adapter.on_message, adapter.name, 0

    async def burst(self, count: int, counter: Any) -> tuple[float, float, float]:
        """`count` overheard messages over CHATS groups, one after another: (CPU s, wall s, round trips) each."""
        cpu, wall = time.process_time(), time.perf_counter()
        with counter() as trips:
            for _ in range(count):
                self.sent += 1
                await self.handle(Overheard(self.name, f"g{self.sent % CHATS}", None, f"m{self.sent}", "u1", "Ann",
                                            LINE))
        return ((time.process_time() - cpu) / count, (time.perf_counter() - wall) / count, trips[0] / count)


async def _keep_cost(sec: Section, name: str, base_url: str, env: dict[str, str], counter: Any) -> None:
    adapter = RecordingAdapter()
    with tempfile.TemporaryDirectory() as d:
        async with running_app(Path(d), base_url, config=QUIET, adapters=(adapter,), env=env) as app:
            talk = Talk(adapter)
            await talk.burst(500, counter)  # warm up: statements prepared, rings filled
            fresh = await talk.burst(MEASURED, counter)
            await talk.burst(HISTORY, counter)
            later = await talk.burst(MEASURED, counter)
            kept = sum([len(await app.store.group_context.recent(f"{adapter.name}:g{c}", since=0.0, limit=1000))
                        for c in range(CHATS)])
            assert adapter.sent == [] and adapter.typings == []
    sec.add(f"{name}: hub process CPU per un-addressed message (fresh / after {HISTORY:,} more)",
            f"{ms(fresh[0])} / {ms(later[0])}")
    sec.add(f"{name}: database round trips per un-addressed message", f"{fresh[2]:.2f} / {later[2]:.2f}")
    sec.add(f"{name}: latency of handling one (sequential, wall)", f"{ms(fresh[1])} / {ms(later[1])}")
    sec.add(f"{name}: lines stored after {500 + 2 * MEASURED + HISTORY:,} messages in {CHATS} groups", f"{kept:,}")


async def _prompt_growth(sec: Section) -> None:
    """The same question in a group with nothing overheard, with 30 typical lines, and with 30 lines at the cap."""
    llm = FakeOpenAI()
    await llm.start()
    adapter = RecordingAdapter()
    try:
        with tempfile.TemporaryDirectory() as d:
            async with running_app(Path(d), llm.base_url, config=QUIET, adapters=(adapter,)) as app:
                sizes = {}
                for chat, lines in (("quiet", []), ("typical", [TYPICAL[n % len(TYPICAL)] for n in range(30)]),
                                    ("longest", ["长" * 250 + "x" * 300 for _ in range(30)])):
                    for n, text in enumerate(lines):
                        assert adapter.on_message is not None
                        await adapter.on_message(Overheard(adapter.name, chat, None, f"{chat}{n}", f"u{n % 4}",
                                                           f"Person {n % 4}", text))
                    sizes[chat] = await _asked(app, adapter, llm, chat)
    finally:
        await llm.stop()
    for case in ("typical", "longest"):
        block, body = sizes[case][0], sizes[case][1] - sizes["quiet"][1]
        sec.add(f"prompt added by 30 {case} lines: characters / estimated tokens / request bytes",
                f"{len(block):,} / {estimate_tokens(block):,} / {body:,}")


async def _asked(app: App, adapter: RecordingAdapter, llm: FakeOpenAI, chat: str) -> tuple[str, int]:
    await adapter.say("@bot what did I miss?", chat, group=True)
    await app.hub.idle()
    body = llm.requests[-1]["body"]
    block = next((m["content"] for m in body["messages"] if "<<< group context" in str(m.get("content"))), "")
    return block, len(json.dumps(body, ensure_ascii=False).encode())


async def run() -> Section:
    sec = Section("Group context: the cost of an un-addressed group message, and the prompt it adds")
    server = PostgresServer()
    await asyncio.to_thread(server.start)
    try:
        async with fake_llm() as base_url:
            await _keep_cost(sec, "SQLite", base_url, {}, count_db_round_trips)
            url = await server.new_database()
            await _keep_cost(sec, "PostgreSQL", base_url, {"BOTHUB_DATABASE_URL": url}, count_pg_statements)
        await _prompt_growth(sec)
    finally:
        await asyncio.to_thread(server.stop)
    sec.notes.append("An un-addressed message runs no model, joins no lane, writes no inbox entry, sends nothing and "
                     "shows no typing: its cost is the gate plus one insert-and-trim (SQLite: one hop to the database "
                     "thread, one transaction; PostgreSQL: one statement). PostgreSQL's own CPU is not in the "
                     "hub's.")
    sec.notes.append("Typical lines: short English and Chinese chat (11–71 characters); longest: 30 lines at the "
                     "default cap of 500 characters, CJK and Latin mixed.")
    return sec


if __name__ == "__main__":
    run_standalone(run)
