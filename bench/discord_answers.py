"""Discord pacing (issue 12 §1): a channel and two threads inside it, each @mentioned at 0.5 msg/s, against the
fake Discord's real per-channel limits (5 requests / 5 s) and an LLM whose first token comes after 200 ms.

Targets: every question answered, p99 first visible text ≤ first token + 300 ms, ≤ 2 REST calls per answer
(one send and its final edit; "typing…" only when the model is silent for 0.5 s): a thread is paced as its own channel.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from adapters.discord import adapter as discord_adapter
from bench.common import Section, median, percentile, run_standalone
from tests.fakes.discord_api import APP_ID, BOT_USER, CHANNEL_ID, THREAD2_ID, THREAD_ID, TOKEN, FakeDiscord
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import running_app, wait_for

TARGETS = (CHANNEL_ID, THREAD_ID, THREAD2_ID)
PER_TARGET = 10
INTERVAL = 2.0  # seconds between questions to one target (0.5 msg/s)
FIRST_TOKEN = 0.2


async def _ask(fake: FakeDiscord, channel: str, n: int) -> float:
    question = f"question {n}."  # the fake LLM echoes it back
    payload = fake.user_message(f"<@{APP_ID}> {question}", channel_id=channel, mentions=(BOT_USER,))
    started = time.perf_counter()
    await fake.dispatch("MESSAGE_CREATE", payload)
    await wait_for(lambda: any(question in m["content"] for m in fake.messages.values()
                               if m["channel_id"] == channel and m["author"]["id"] == APP_ID),
                   within=60, interval=0.005)
    return time.perf_counter() - started


async def _target(fake: FakeDiscord, channel: str, index: int) -> list[float]:
    await asyncio.sleep(index * INTERVAL / len(TARGETS))  # spread the targets over the interval
    results = []
    for i in range(PER_TARGET):
        started = time.perf_counter()
        results.append(await _ask(fake, channel, index * PER_TARGET + i))
        await asyncio.sleep(max(0.0, INTERVAL - (time.perf_counter() - started)))
    return results


async def run() -> Section:
    sec = Section(f"Discord pacing: a channel and 2 of its threads, {PER_TARGET} mentions each at 0.5 msg/s, "
                  f"LLM first token {FIRST_TOKEN * 1000:.0f} ms, fake Discord limits 5 / 5 s per channel")
    discord_adapter.GUILD_READY_TIMEOUT = 0.05  # the fake has one guild
    llm, fake = FakeOpenAI(first_token_delay=FIRST_TOKEN), FakeDiscord()
    await llm.start()
    await fake.start()
    env = {"DISCORD_BOT_TOKEN": TOKEN, "DISCORD_API_BASE": fake.api_base, "DISCORD_GATEWAY_URL": fake.gateway_url}
    try:
        with tempfile.TemporaryDirectory() as d:
            async with running_app(Path(d), llm.base_url, ("discord",), env=env, config={"log_level": "WARNING"}):
                before = len(fake.calls)
                latencies = [t for ts in await asyncio.gather(
                    *(_target(fake, channel, i) for i, channel in enumerate(TARGETS))) for t in ts]
                await asyncio.sleep(1.5)  # any late edit lands
                rest = [c for c in fake.calls[before:] if c.path.startswith("/channels/")]
    finally:
        await fake.stop()
        await llm.stop()
    total = len(TARGETS) * PER_TARGET
    sec.add("answered", f"{len(latencies)} / {total}", f"{total}", len(latencies) == total)
    sec.check("first visible text p99", percentile(latencies, 99) * 1000, FIRST_TOKEN * 1000 + 300, "ms", fmt=".0f")
    sec.add("first visible text p50", f"{median(latencies) * 1000:.0f} ms")
    sec.check("REST calls per answer", len(rest) / total, 2, "", fmt=".2f")
    return sec


if __name__ == "__main__":
    run_standalone(run)
