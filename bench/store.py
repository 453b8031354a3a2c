"""Store scaling: append and chain build at 10²–10⁵ stored messages, /tree render, start-up, idle session memory.

A send must cost the same whatever the store's size (DESIGN.md): appends and chain loads are timed at
growing store sizes and compared. The model's chain is also timed in memory (what each turn rebuilds
from the session's cached path) and as the request body LLMClient sends.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import random
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import psutil
from openai._utils import async_maybe_transform
from openai.types.chat import completion_create_params

from bench.common import Section, fake_llm, median, ms, run_standalone
from bench.hub import TimedAdapter
from bot.agent.prompt import fit_history
from bot.agent.tokens import TokenCounter
from bot.agent.tools import default_registry
from bot.app import App
from bot.store.sqlite import SqliteStore
from bot.tree.model import Conversation, Message, new_id
from bot.tree.view import render_tree
from tests.harness import make_config, running_app

SIZES = (100, 10_000, 100_000)
DEPTHS = (10, 100, 1000)
FILLER_LENGTH = 100  # messages per filler conversation
REPEATS = 30
TREE_SIZES = (1000, 5000, 10_000)
IDLE_SESSIONS = 400
CONTEXT_TOKENS = 32_000


def linear(length: int, words: int = 12, seed: int = 0) -> Conversation:
    """A conversation of alternating user/assistant turns, one after another."""
    rng = random.Random(seed)
    conv = Conversation("system prompt")
    for i in range(length):
        text = " ".join(rng.choice(("alpha", "beta", "gamma", "delta", "omega")) for _ in range(words))
        conv.add_message(_unique(conv, Message.new("user" if i % 2 == 0 else "assistant", f"{i}: {text}")))
    return conv


def _unique(conv: Conversation, msg: Message) -> Message:
    """Ids are 8 hex digits: a tree of 10⁵ messages draws one twice more often than not (as a store does for a new
    message, the newcomer takes another)."""
    while msg.id in conv.messages:
        msg = dataclasses.replace(msg, id=new_id())
    return msg


def branchy(nodes: int, seed: int = 1) -> Conversation:
    """Mostly linear with a branch every ~10 messages (edits, /retry, /goto), cursor on the newest node."""
    rng = random.Random(seed)
    conv = Conversation("system prompt")
    ids = [conv.root_id]
    for i in range(nodes - 1):
        parent = ids[-1] if rng.random() < 0.9 else rng.choice(ids)
        msg = conv.add_message(_unique(conv, Message.new("user" if i % 2 == 0 else "assistant",
                                                         f"message {i} " + "lorem ipsum dolor sit amet " * 3,
                                                         parent_id=parent)))
        ids.append(msg.id)
    return conv


async def timed(fn: Callable[[], Awaitable[object]], repeats: int = REPEATS, rounds: int = 3) -> float:
    """Best of `rounds` medians of `repeats` awaited calls: robust to other work on a shared machine."""
    best = float("inf")
    for _ in range(rounds):
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            await fn()
            samples.append(time.perf_counter() - start)
        best = min(best, median(samples))
    return best


class Scaling:
    """One store grown stage by stage; chains of each depth live in their own chats."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.stored = 0
        self.chains: dict[int, tuple[str, str, str]] = {}  # depth → (chat, conversation id, leaf id)
        self._fillers = 0

    async def add_chain(self, depth: int) -> None:
        conv = linear(depth, seed=depth)
        info = await self.store.conversations.import_tree(f"bench:chain{depth}", conv)
        self.chains[depth] = (info.chat, info.id, conv.current_message_id)
        self.stored += depth

    async def fill_to(self, total: int) -> None:
        while self.stored + FILLER_LENGTH <= total:
            self._fillers += 1
            await self.store.conversations.import_tree(f"bench:filler{self._fillers}", linear(FILLER_LENGTH, seed=0))
            self.stored += FILLER_LENGTH

    async def append_time(self, depth: int) -> float:
        chat, conv_id, leaf = self.chains[depth]

        async def append() -> None:  # siblings under the leaf: the chain depth stays the same
            await self.store.conversations.append(chat, conv_id, [Message.new("user", "one more", parent_id=leaf)])

        result = await timed(append)
        self.stored += REPEATS * 3
        return result

    async def chain_time(self, depth: int) -> float:
        chat, conv_id, leaf = self.chains[depth]
        return await timed(lambda: self.store.conversations.chain(chat, conv_id, leaf), 20)


async def scaling(sec: Section, db: Path) -> int:
    """Grow one store through SIZES; returns how many messages it holds at the end."""
    store = SqliteStore(db)
    await store.open()
    grow = Scaling(store)
    appends: dict[tuple[int, int], float] = {}
    chains: dict[tuple[int, int], float] = {}
    try:
        for size in SIZES:
            for depth in DEPTHS:
                if depth not in grow.chains and depth <= size:
                    await grow.add_chain(depth)
            started = time.perf_counter()
            await grow.fill_to(size)
            fill = time.perf_counter() - started
            sec.add(f"store with {grow.stored} messages (filled in {fill:.1f} s)", "")
            for depth in grow.chains:
                appends[size, depth] = await grow.append_time(depth)
                chains[size, depth] = await grow.chain_time(depth)
                sec.add(f"  depth {depth}: append / get_chain (median)",
                        f"{ms(appends[size, depth])} / {ms(chains[size, depth])}")
    finally:
        await store.close()
    for depth in DEPTHS:
        first = min(s for s in SIZES if (s, depth) in appends)
        for name, table in (("append", appends), ("get_chain", chains)):
            ratio = table[SIZES[-1], depth] / table[first, depth]
            sec.check(f"{name} at depth {depth}: 10^5 vs {first} stored", ratio, 2, "×", fmt=".2f")
    return grow.stored


async def chain_in_memory(sec: Section) -> None:
    """What each turn does with the cached path: to_openai + fit_history, then the request body."""
    tools = default_registry().get_openai_tools()
    for depth in DEPTHS:
        path = linear(depth).get_message_chain()[1:]

        async def build(path: list[Message] = path) -> None:
            fit_history("system prompt " * 200, [m.to_openai() for m in path], CONTEXT_TOKENS, TokenCounter())

        async def body(path: list[Message] = path) -> None:
            # what LLMClient sends: the params the SDK transforms are tiny; history and tools go through
            # extra_body as plain JSON (the SDK's own walk of `messages=` cost 148 ms at depth 1000)
            messages = fit_history("system prompt " * 200, [m.to_openai() for m in path], CONTEXT_TOKENS,
                                   TokenCounter())
            await async_maybe_transform(
                {"model": "m", "messages": [], "stream": True},
                completion_create_params.CompletionCreateParamsStreaming,
            )
            json.dumps({"messages": messages, "tools": tools})

        sec.add(f"model chain at depth {depth}: to_openai+fit_history / + request body as sent",
                f"{ms(await timed(build, 20))} / {ms(await timed(body, 5))}")


def _render_call(conv: Conversation) -> Callable[[], Awaitable[object]]:
    async def render() -> None:
        render_tree(conv, 3500)

    return render


async def trees(sec: Section, db: Path) -> None:
    store = SqliteStore(db)
    await store.open()
    try:
        for nodes in TREE_SIZES:
            conv = branchy(nodes)
            info = await store.conversations.import_tree(f"bench:tree{nodes}", conv)
            loaded = await store.conversations.load(info.chat, info.id, "system prompt")
            assert loaded is not None and len(loaded) == nodes
            render = await timed(_render_call(loaded), 10)
            load = await timed(partial(store.conversations.load, info.chat, info.id, "system prompt"), 5)
            if nodes == 10_000:
                sec.check(f"/tree render, {nodes} nodes", render * 1000, 50, "ms", fmt=".1f")
            else:
                sec.add(f"/tree render, {nodes} nodes", ms(render))
            sec.add(f"  load_conversation, {nodes} nodes", ms(load))
    finally:
        await store.close()


async def startup(sec: Section, tmp: Path, stored: int) -> None:
    """App start to ready (store open + migrations + adapters) on the 10^5-message database."""
    cfg, env = make_config(tmp, "http://127.0.0.1:9/v1", {"log_level": "WARNING"})
    for attempt in ("first start (creates the workspace)", "start"):
        started = time.perf_counter()
        app = App(cfg, env, adapters=(TimedAdapter(),))
        await app.start()
        took = time.perf_counter() - started
        await app.stop()
        if attempt == "start":
            sec.check(f"start-up with {stored} messages stored", took, 1, "s", fmt=".3f")
        else:
            sec.add(f"{attempt}, {stored} messages stored", f"{took:.3f} s")


async def idle_memory(sec: Section, tmp: Path) -> None:
    """Python memory retained per chat that has talked once and is now idle (session, lane, pacing…)."""
    adapter = TimedAdapter()
    async with fake_llm() as base_url, running_app(tmp, base_url, config={"log_level": "WARNING"},
                                                   adapters=(adapter,)) as app:
        await adapter.ask("warmup", "warm up everything first")
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        rss_before = psutil.Process().memory_info().rss
        for batch in range(0, IDLE_SESSIONS, 50):
            await asyncio.gather(*(adapter.ask(f"idle{i}", f"hello from chat {i}")
                                   for i in range(batch, batch + 50)))
        await app.hub.idle()
        adapter.sent.clear()  # what the fake platform recorded is not the bot's memory
        adapter.edits.clear()
        adapter.visible.clear()
        adapter.typings.clear()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        rss = psutil.Process().memory_info().rss - rss_before
        sec.add(f"memory per idle known session ({IDLE_SESSIONS} chats, Python heap)",
                f"{(after - before) / IDLE_SESSIONS / 1024:.1f} KiB")
        sec.add("  RSS growth per session (coarse)", f"{rss / IDLE_SESSIONS / 1024:.1f} KiB")


async def run() -> Section:
    sec = Section("Store: scaling, /tree, start-up, idle sessions")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        db = tmp / "data" / "bothub.sqlite3"
        stored = await scaling(sec, db)
        await chain_in_memory(sec)
        await trees(sec, tmp / "trees.sqlite3")
        await startup(sec, tmp, stored)
    with tempfile.TemporaryDirectory() as d:
        await idle_memory(sec, Path(d))
    return sec


if __name__ == "__main__":
    run_standalone(run)
