"""Many chats waiting on a slow model at once: runs must overlap, not queue behind each other."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from bench.common import Section, fake_llm, median, percentile, run_standalone
from bench.hub import TimedAdapter
from tests.harness import running_app

CHATS = 1000
LLM_DELAY = 2.0
LIMIT = 3.0


async def run() -> Section:
    sec = Section(f"Concurrency: {CHATS} chats, each waiting on a {LLM_DELAY:g} s LLM answer")
    adapter = TimedAdapter()
    async with fake_llm(first_token_delay=LLM_DELAY) as base_url:
        with tempfile.TemporaryDirectory() as d:
            async with running_app(Path(d), base_url, config={"log_level": "WARNING"}, adapters=(adapter,)):
                started = time.perf_counter()
                results = await asyncio.gather(
                    *(adapter.ask(f"chat{i}", f"chat {i} would like an answer") for i in range(CHATS)),
                    return_exceptions=True,
                )
                wall = time.perf_counter() - started
    done = [end - start for r in results if not isinstance(r, BaseException) for start, end in [r]]
    sec.add("answered", f"{len(done)} / {CHATS}", f"{CHATS}", len(done) == CHATS)
    sec.check("total wall time", wall, LIMIT, "s", fmt=".2f")
    sec.add("per-chat latency p50 / p99", f"{median(done):.2f} s / {percentile(done, 99):.2f} s")
    return sec


if __name__ == "__main__":
    run_standalone(run)
