"""Many chats waiting on a slow model at once: runs must overlap, not queue behind each other.

The hub runs in this process (on the loop `bothub run` uses), the fake LLM in its own. The figure is the median
of PASSES measured passes, each with a fresh app and fake (on a shared 2-core machine one pass varies by ±0.15 s);
then one more pass runs under cProfile and its top entries (own time) go into the notes: where a thousand
concurrent answers spend the CPU.
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from bench.common import Section, fake_llm, median, percentile, run_standalone
from bench.hub import TimedAdapter
from tests.harness import running_app

CHATS = 1000
PASSES = 3
LLM_DELAY = 2.0
LIMIT = 3.0
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


async def _once(profile: cProfile.Profile | None = None) -> tuple[list[float], float, float]:
    adapter = TimedAdapter()
    async with fake_llm(first_token_delay=LLM_DELAY) as base_url:
        with tempfile.TemporaryDirectory() as d:
            quiet = "CRITICAL" if profile is not None else "WARNING"  # the profiled pass only counts its failures
            async with running_app(Path(d), base_url, config={"log_level": quiet}, adapters=(adapter,)):
                started, cpu = time.perf_counter(), time.process_time()
                if profile is not None:
                    profile.enable()
                results = await asyncio.gather(
                    *(adapter.ask(f"chat{i}", f"chat {i} would like an answer") for i in range(CHATS)),
                    return_exceptions=True,
                )
                if profile is not None:
                    profile.disable()
                wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return [end - start for r in results if not isinstance(r, BaseException) for start, end in [r]], wall, cpu


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
    sec = Section(f"Concurrency: {CHATS} chats, each waiting on a {LLM_DELAY:g} s LLM answer")
    passes = sorted([await _once() for _ in range(PASSES)], key=lambda p: p[1])
    done, wall, _ = passes[len(passes) // 2]
    cpu = median([p[2] for p in passes])
    answered = min(len(p[0]) for p in passes)
    sec.add(f"answered (fewest of {PASSES} passes)", f"{answered} / {CHATS}", f"{CHATS}", answered == CHATS)
    sec.check(f"total wall time, median of {PASSES} passes", wall, LIMIT, "s", fmt=".2f")
    sec.add("  each pass", " / ".join(f"{p[1]:.2f} s" for p in passes))
    sec.add("per-chat latency p50 / p99 (the median pass)", f"{median(done):.2f} s / {percentile(done, 99):.2f} s")
    sec.add("hub process CPU (event loop + database thread), median",
            f"{cpu:.2f} s ({cpu / CHATS * 1000:.2f} ms per answer)")
    profile = cProfile.Profile()
    profiled, profiled_wall, _ = await _once(profile)
    sec.notes.append(f"Profile of a second pass under cProfile (wall {profiled_wall:.2f} s with the profiler, "
                     f"{len(profiled)} / {CHATS} answered):")
    sec.notes += _top(profile)
    sec.notes.append(BEFORE)
    return sec


if __name__ == "__main__":
    run_standalone(run)
