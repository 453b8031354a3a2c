"""Many chats waiting on a slow model at once: runs must overlap, not queue behind each other.

The hub runs in this process (on the loop `bothub run` uses), the fake LLM in its own. Each of PASSES passes gets
a fresh fake and first times a bare client (aiohttp, nothing else) sending the same number of streamed requests
to it, then the hub answering as many chats through it: their ratio cancels the machine's load out (on a shared
2-core machine one pass varies by ±0.15 s). The same is then done once with BIG chats. One more pass runs under
cProfile (before the big pass, whose heap would make a full garbage collection land in it) and its top entries
(own time) go into the notes: where a thousand concurrent answers spend the CPU.
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.common import Section, fake_llm, median, percentile, run_standalone
from bench.hub import TimedAdapter
from tests.fakes.openai_api import API_KEY, MODEL
from tests.harness import running_app

CHATS = 1000
BIG = 10_000
PASSES = 3
LLM_DELAY = 2.0
LIMIT = 2.6  # seconds, on a quiet machine
BARE_RATIO = 1.25  # the hub's wall time over the bare client's, in the same pass
BIG_RATIO = 2.5  # BIG runs' wall time over CHATS runs'
KEY = {"Authorization": f"Bearer {API_KEY}"}  # the key the fake takes
TOP = 10
# The same profile before bot/agent/provider.py (requests through the openai SDK), a separate run on 2026-11-30 at
# load average ≈ 2.5: 6.8 M function calls; the SDK's request path (chat.completions.create → httpx2 → the aiohttp
# transport) took 4.5 s of the 8.0 s profiled, of which building the request (option transforms, httpx models)
# 1.4 s; 7 thread-pool hops per answer to the database thread 0.65 s.
BEFORE = ("before (openai SDK): 6.8 M calls; SDK request path 4.5 s cumulative of 8.0 s profiled "
          "(request building 1.4 s, httpx2 + transport 2.0 s); wall 5.1–5.8 s, hub CPU 3.3–3.6 s. "
          "Then (aiohttp client, a thread-pool future per database hop, Python's default GC threshold; 2026-12-01, "
          "load ≈ 1.8): 3.2 M calls, wall 4.3–4.5 s, hub CPU 2.2–2.4 s, ≈ 0.45 s of it cyclic GC that freed nothing. "
          "Then (aiohttp client on asyncio's loop, 2026-12-01 06:00, load ≈ 0.8): 2.8 M calls, wall 3.10–3.29 s, "
          "hub CPU 1.5–1.8 s, LLM request path 0.39–0.44 s in the profile")


class Pass:
    """One pass: the bare client's wall time, then the hub's answers (latencies), wall time and CPU."""

    def __init__(self, bare: float, done: list[float], wall: float, cpu: float) -> None:
        self.bare, self.done, self.wall, self.cpu = bare, done, wall, cpu

    @property
    def ratio(self) -> float:
        return self.wall / self.bare


async def _bare(base_url: str, chats: int) -> float:
    """`chats` streamed requests at once from a bare aiohttp client, each read to its end: the floor."""
    async def one(session: aiohttp.ClientSession, i: int) -> None:
        body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": f"chat {i} asks"}]}
        async with session.post(f"{base_url}/chat/completions", json=body, headers=KEY) as response:
            response.raise_for_status()
            async for _ in response.content:
                pass

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        started = time.perf_counter()
        await asyncio.gather(*(one(session, i) for i in range(chats)))
        return time.perf_counter() - started


async def _once(chats: int = CHATS, profile: cProfile.Profile | None = None) -> Pass:
    adapter = TimedAdapter()
    async with fake_llm(first_token_delay=LLM_DELAY) as base_url:
        bare = await _bare(base_url, chats) if profile is None else 0.0
        with tempfile.TemporaryDirectory() as d:
            quiet = "CRITICAL" if profile is not None else "WARNING"  # the profiled pass only counts its failures
            config = {"log_level": quiet, "llm": {"auto_titles": False}}  # the bare client's requests, no more
            async with running_app(Path(d), base_url, config=config, adapters=(adapter,)):
                started, cpu = time.perf_counter(), time.process_time()
                if profile is not None:
                    profile.enable()
                results = await asyncio.gather(
                    *(adapter.ask(f"chat{i}", f"chat {i} would like an answer", within=30 * chats / CHATS)
                      for i in range(chats)),
                    return_exceptions=True,
                )
                if profile is not None:
                    profile.disable()
                wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    done = [end - start for r in results if not isinstance(r, BaseException) for start, end in [r]]
    return Pass(bare, done, wall, cpu)


def _top(profile: cProfile.Profile) -> list[str]:
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    own = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)
    total_calls = sum(v[1] for v in stats.values())
    lines = [f"after: {total_calls / 1e6:.1f} M calls; top {TOP} by own time (own / cumulative seconds, calls):"]
    for (file, line, func), (_, calls, own_s, cum_s, _) in own[:TOP]:
        where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if file != "~" else "built-in"
        lines.append(f"  {own_s:.3f} / {cum_s:.3f} s, {calls} calls — {where} {func}")
    request = [v[3] for (file, _, func), v in stats.items()
               if file.endswith("bot/agent/provider.py") and func == "_request"]
    lines.append(f"  LLM request path (Provider._request, cumulative): {sum(request):.2f} s")
    return lines


async def run() -> Section:
    sec = Section(f"Concurrency: {CHATS} and {BIG} chats, each waiting on a {LLM_DELAY:g} s LLM answer")
    passes = sorted([await _once() for _ in range(PASSES)], key=lambda p: p.wall)
    middle = passes[len(passes) // 2]
    answered = min(len(p.done) for p in passes)
    sec.add(f"answered (fewest of {PASSES} passes)", f"{answered} / {CHATS}", f"{CHATS}", answered == CHATS)
    sec.check(f"total wall time, median of {PASSES} passes", middle.wall, LIMIT, "s", fmt=".2f")
    sec.add("  each pass: hub / bare client", " · ".join(f"{p.wall:.2f} / {p.bare:.2f} s" for p in passes))
    sec.check(f"hub ÷ bare client in the same pass, median of {PASSES}", median([p.ratio for p in passes]),
              BARE_RATIO, "×", fmt=".2f")
    sec.add("per-chat latency p50 / p99 (the median pass)",
            f"{median(middle.done):.2f} s / {percentile(middle.done, 99):.2f} s")
    cpu = median([p.cpu for p in passes])
    sec.add("hub process CPU (event loop + database thread), median",
            f"{cpu:.2f} s ({cpu / CHATS * 1000:.2f} ms per answer)")
    profile = cProfile.Profile()
    profiled = await _once(CHATS, profile)
    sec.notes.append(f"Profile of another {CHATS}-chat pass under cProfile (wall {profiled.wall:.2f} s with the "
                     f"profiler, {len(profiled.done)} / {CHATS} answered):")
    sec.notes += _top(profile)
    big = await _once(BIG)
    sec.add(f"{BIG} chats: answered (1 pass)", f"{len(big.done)} / {BIG}", f"{BIG}", len(big.done) == BIG)
    sec.add(f"{BIG} chats: wall time hub / bare client (1 pass)", f"{big.wall:.2f} / {big.bare:.2f} s")
    sec.check(f"{BIG} chats' wall time ÷ {CHATS} chats' (median pass)", big.wall / middle.wall, BIG_RATIO, "×",
              fmt=".2f")
    sec.add(f"{BIG} chats: hub CPU, latency p50 / p99",
            f"{big.cpu:.2f} s ({big.cpu / BIG * 1000:.2f} ms per answer); "
            f"{median(big.done):.2f} s / {percentile(big.done, 99):.2f} s" if big.done else f"{big.cpu:.2f} s")
    sec.notes.append(BEFORE)
    return sec


if __name__ == "__main__":
    run_standalone(run)
