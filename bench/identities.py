"""Many bot accounts in one process (issue 30): N Telegram identities added to a running hub through the store,
against one fake Bot API in this process (every bot made before the first reading, so the deltas are the hub's).
Figures: time until all N poll, resident memory per extra identity, CPU of one answer with N running vs one.

`python -m bench.identities [N]` (default 20)."""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path

import psutil

from bench.common import Section, fake_llm, run_standalone
from bot.fleet.model import Identity
from bot.fleet.secrets import new_key
from tests.fakes.telegram_api import TOKEN
from tests.fakes.telegram_cloud import TelegramCloud
from tests.harness import running_app, wait_for


def _rss() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 1e6


async def _answer_cpu(bot: object, chat: int, rounds: int = 20) -> float:
    """CPU seconds of this process per answered message (one chat, one after another)."""
    from tests.fakes.telegram_api import FakeTelegram

    assert isinstance(bot, FakeTelegram)
    start = time.process_time()
    for n in range(rounds):
        bot.inject_message(chat, f"question {n}")
        await wait_for(lambda n=n: len(bot.bot_texts(chat)) > n, within=20)  # type: ignore[misc]
    return (time.process_time() - start) / rounds


async def measure() -> Section:
    count = int(sys.argv[1]) if sys.argv[1:2] and sys.argv[1].isdigit() else 20
    section = Section(f"Identities: {count} extra Telegram bots in one hub")
    cloud = TelegramCloud()
    await cloud.start()
    first = cloud.add_bot(TOKEN, "hub_test_bot", 1000001)
    tokens = [f"{500000 + n}:EXTRA-TOKEN-{n}" for n in range(count)]
    for n, token in enumerate(tokens):
        cloud.add_bot(token, f"extra{n}_bot", 5000000 + n)
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": cloud.api_base, "BOTHUB_SECRET_KEY": new_key()}
    try:
        async with fake_llm() as llm_url:
            with tempfile.TemporaryDirectory() as tmp:
                async with running_app(Path(tmp), llm_url, ("telegram",), env=env,
                                       config={"fleet": {"poll": 0.2}}) as app:
                    solo_cpu = await _answer_cpu(first, 42)
                    before = _rss()
                    started = time.monotonic()
                    for n, token in enumerate(tokens):
                        await app.fleet.put_identity(Identity(name=f"extra{n}", platform="telegram",
                                                              credentials={"TELEGRAM_BOT_TOKEN": token}), "bench")
                    app.fleet_watch.poke()
                    await wait_for(lambda: all(b.calls_of("getUpdates") for b in cloud.bots.values()), within=120)
                    up = time.monotonic() - started
                    after = _rss()
                    many_cpu = await _answer_cpu(first, 43)
                    per = (after - before) / count
                    section.add("identities started (stored → all polling)", f"{up:.2f} s for {count}")
                    section.check("resident memory per extra identity", per, 1.0, "MB", fmt=".2f")
                    section.add("RSS before / after", f"{before:.1f} / {after:.1f} MB")
                    growth = (many_cpu - solo_cpu) / solo_cpu * 100 / count if solo_cpu else 0.0
                    section.add("CPU per answer, 1 vs N+1 bots", f"{solo_cpu * 1000:.1f} / {many_cpu * 1000:.1f} ms")
                    section.check("CPU per answer, growth per extra identity", growth, 5.0, "%", fmt=".2f")
    finally:
        await cloud.stop()
    return section


if __name__ == "__main__":
    run_standalone(measure)
