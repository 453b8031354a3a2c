"""HTTP API overhead: request → JSON reply, beyond the time spent waiting on the LLM.

The real app (SQLite, hub, agent loop, openai SDK) serves the HTTP API on its own aiohttp server; a plain
aiohttp client posts with a bearer token and reads the JSON. Overhead per request = (client sends →
client has the parsed JSON) − (time the hub spent awaiting the model's stream, measured as in bench/hub.py).
It covers the HTTP round trip, the token check, the rate limiter, the hub's gate, lane, store writes, the
wait for the lane to go idle and the JSON response. The fake LLM runs in its own process (zero latency).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.common import Section, fake_llm, median, ms, percentile, run_standalone
from bench.hub import question, time_llm
from bot.chats.api_tokens import ApiTokens
from tests.harness import running_app

SEQUENTIAL = 300  # requests, one after another, in one conversation
CLIENTS, PER_CLIENT = 20, 15  # concurrent callers, each in its own conversation
CONFIG = {"log_level": "WARNING", "server": {"enabled": True, "port": 0},
          "api": {"burst": 100_000, "requests_per_minute": 1e9}}


async def _timed(http: aiohttp.ClientSession, url: str, token: str, text: str) -> float:
    started = time.perf_counter()
    async with http.post(url, json={"text": text}, headers={"Authorization": f"Bearer {token}"}) as resp:
        body = await resp.json()
    elapsed = time.perf_counter() - started
    if resp.status != 200 or body["text"] != text:
        raise RuntimeError(f"unexpected answer {resp.status}: {body}")
    return elapsed


async def measure(base_url: str, tmp: Path) -> tuple[list[float], list[float], list[float], float, float]:
    """(sequential overheads, concurrent overheads, LLM waits of the sequential run, CPU seconds per
    sequential request in this process — hub and client —, concurrent wall time)"""
    async with running_app(tmp, base_url, ("api",), config=CONFIG) as app, aiohttp.ClientSession() as http:
        _, token = await ApiTokens(app.store.api_tokens, app.store.dashboard).create("bench", "bench")
        llm = time_llm(app)
        base = f"http://127.0.0.1:{app.web_port}/api/v1/chat"
        await _timed(http, f"{base}/warmup/messages", token, "warm up the connection pool please")
        sequential: dict[str, float] = {}
        cpu = time.process_time()
        for n in range(SEQUENTIAL):
            text = question(0, n)
            sequential[text] = await _timed(http, f"{base}/seq/messages", token, text)
        cpu = (time.process_time() - cpu) / SEQUENTIAL
        concurrent: dict[str, float] = {}

        async def client(c: int) -> None:
            for n in range(PER_CLIENT):
                text = question(c + 1, n)
                concurrent[text] = await _timed(http, f"{base}/client-{c}/messages", token, text)

        started = time.perf_counter()
        await asyncio.gather(*(client(c) for c in range(CLIENTS)))
        wall = time.perf_counter() - started
    return ([sequential[t] - llm[t] for t in sequential], [concurrent[t] - llm[t] for t in concurrent],
            [llm[t] for t in sequential], cpu, wall)


async def run() -> Section:
    sec = Section("HTTP API: request → JSON reply, overhead beyond the LLM (zero-latency fake LLM over loopback)")
    async with fake_llm() as base_url:
        with tempfile.TemporaryDirectory() as d:
            seq, conc, llm, cpu, wall = await measure(base_url, Path(d))
    sec.add(f"{SEQUENTIAL} sequential requests in one conversation: LLM round trip p50", ms(median(llm)))
    sec.check("  overhead beyond the LLM p50", median(seq) * 1000, 10, "ms", fmt=".2f")
    sec.check("  overhead beyond the LLM p95", percentile(seq, 95) * 1000, 25, "ms", fmt=".2f")
    tenth = SEQUENTIAL // 10
    sec.add("  overhead p50, first vs last 10 % (history growth)",
            f"{ms(median(seq[:tenth]))} / {ms(median(seq[-tenth:]))}")
    sec.add("  CPU per request (hub and client, one process)", ms(cpu))
    sec.add(f"{CLIENTS} concurrent callers × {PER_CLIENT} requests: throughput", f"{len(conc) / wall:.0f} req/s")
    sec.add("  overhead beyond the LLM p50 / p95 (saturated: queueing for the CPU)",
            f"{ms(median(conc))} / {ms(percentile(conc, 95))}")
    sec.notes.append("Overhead = client-side request time minus the hub's wait on the model's stream; it "
                     "includes the HTTP round trip on loopback, the token lookup, two message appends and "
                     "the JSON response. Targets are this benchmark's own (no issue sets one).")
    return sec


if __name__ == "__main__":
    run_standalone(run)
