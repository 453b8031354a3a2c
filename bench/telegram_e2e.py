"""Telegram end to end: `bothub run` (real PTB adapter, long polling) against a flood-limited fake Bot API.

N messages over 20 chats (10 private, 10 groups with an @mention) arrive at a steady rate; the fake
LLM streams an echo of each one word per chunk. Every sendMessage / editMessageText that lands is
timed in the fake, so latencies are measured where a user would see them. The same load is then sent
to bench/baseline_bot.py (PTB + openai, one sendMessage per answer) for CPU and memory ratios.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from aiohttp import web

from bench.common import Section, fake_llm, median, percentile, run_standalone
from tests.fakes.telegram_api import BOT_USER, TOKEN, FakeTelegram
from tests.fakes.telegram_rules import FloodLimits

REPO = Path(__file__).resolve().parents[1]
MESSAGES = 200
PRIVATE = [10_001 + i for i in range(10)]
GROUPS = [-100_200_001 - i for i in range(10)]
CHATS = len(PRIVATE) + len(GROUPS)
RATE = 20.0  # injected messages per second
WORDS_DELAY = 0.05  # seconds between streamed words
SETTLE = 30.0  # seconds allowed after the last injection for every answer to complete
_TOKEN = re.compile(r"\bq(\d+)\b")
MENTION = f"@{BOT_USER['username']}"


def question(n: int) -> str:
    return f"q{n} please tell me about the weather today"  # 8 words, echoed back by the fake LLM


class CountingFlood(FloodLimits):
    """The fake's flood rules, also noting which rule each 429 came from (a rejection changes no state)."""

    def __init__(self) -> None:
        super().__init__()
        self.causes: dict[str, int] = defaultdict(int)

    def check(self, chat_id: int, new_message: bool = True) -> int | None:
        retry_after = super().check(chat_id, new_message)
        if retry_after is not None:
            now = time.monotonic()
            tokens, stamp = self._buckets.get(chat_id, (float(self.per_chat_burst), now))
            kind = "group" if chat_id < 0 else "private"
            if tokens + (now - stamp) * self.per_chat_rate < 1:
                self.causes[f"per-chat ({kind})"] += 1
            if len(self._groups.get(chat_id, ())) >= self.group_per_minute:
                self.causes["group 20/min"] += 1
            if len(self._recent) >= self.global_per_second:
                self.causes["global 30/s"] += 1
        return retry_after


@dataclass
class Shown:
    """One bot message as it changed: (time, visible text) per successful send or edit."""

    chat: int
    changes: list[tuple[float, str]] = field(default_factory=list)


class TimedTelegram(FakeTelegram):
    """The strict fake Bot API, also noting every status it answers and when each bot message changed."""

    def __init__(self) -> None:
        super().__init__()
        self.statuses: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.shown: dict[tuple[int, int], Shown] = {}

    async def _handle(self, request: web.Request) -> web.Response:
        response = await super()._handle(request)
        self.statuses[request.match_info["method"]][response.status] += 1
        return response

    def _note(self, result: dict[str, Any]) -> None:
        chat = result["chat"]["id"]
        shown = self.shown.setdefault((chat, result["message_id"]), Shown(chat))
        shown.changes.append((time.monotonic(), result["text"]))

    async def _m_sendMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        result = await super()._m_sendMessage(p)
        self._note(result)
        return result

    async def _m_editMessageText(self, p: dict[str, Any]) -> dict[str, Any]:
        result = await super()._m_editMessageText(p)
        self._note(result)
        return result


@dataclass
class Outcome:
    injected: dict[int, tuple[int, float]]  # question → (chat, time)
    tg: TimedTelegram
    cpu: float  # bot CPU seconds during the load
    peak_rss: float  # bytes
    first: dict[int, float] = field(default_factory=dict)  # question → seconds to first visible text
    complete: dict[int, float] = field(default_factory=dict)  # question → seconds to the complete answer
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    merged: int = 0

    def analyse(self) -> None:
        holders: dict[int, list[tuple[int, int]]] = defaultdict(list)  # question → bot messages holding it
        owner: dict[tuple[int, int], int] = {}  # bot message → the (first) question it answers
        for key, shown in self.tg.shown.items():
            found = sorted({int(n) for n in _TOKEN.findall(shown.changes[-1][1])})
            self.merged += len(found) > 1
            if found:
                owner[key] = found[0]
            for n in found:
                holders[n].append(key)
                done = next((t for t, text in shown.changes if text.endswith(question(n))), None)
                if n in self.injected and n not in self.complete and done is not None:
                    self.first[n] = shown.changes[0][0] - self.injected[n][1]
                    self.complete[n] = done - self.injected[n][1]
        self.lost = sum(1 for n in self.injected if n not in self.complete)
        self.duplicated = sum(1 for keys in holders.values() if len(keys) > 1)
        for chat in {c for c, _ in self.injected.values()}:
            order = [owner[key] for key in sorted(owner) if key[0] == chat]  # by message id
            self.out_of_order += sum(1 for a, b in itertools.pairwise(order) if b < a)

    @property
    def answered(self) -> int:
        return len(self.complete)

    def throughput(self) -> float:
        """Answers per second between the first and the last completed answer."""
        ends = sorted(self.injected[n][1] + self.complete[n] for n in self.complete)
        return (len(ends) - 1) / (ends[-1] - ends[0]) if len(ends) > 1 else 0.0

    def api_calls(self) -> tuple[int, int, int]:
        """(calls other than getUpdates, 429 answers, other 4xx answers)."""
        calls = too_many = other = 0
        for method, statuses in self.tg.statuses.items():
            if method == "getUpdates":
                continue
            for status, count in statuses.items():
                calls += count
                too_many += count if status == 429 else 0
                other += count if 400 <= status < 500 and status != 429 else 0
        return calls, too_many, other


def _peak_rss(proc: psutil.Process) -> float:
    with contextlib.suppress(OSError), open(f"/proc/{proc.pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) * 1024
    return float(proc.memory_info().rss)


async def load(command: list[str], first_token_delay: float) -> Outcome:
    """Start the fakes and the bot, inject the messages at RATE, wait for the answers, measure."""
    tg = TimedTelegram()
    tg.flood = CountingFlood()
    await tg.start()
    chats = [*PRIVATE, *GROUPS]
    for chat in chats:
        tg.open_chat(chat, "private" if chat > 0 else "supergroup")
    try:
        async with fake_llm(WORDS_DELAY, first_token_delay) as llm_url:
            with tempfile.TemporaryDirectory() as data:
                env = {**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": tg.api_base,
                       "OPENAI_BASE_URL": llm_url, "OPENAI_API_KEY": "test-key", "BOTHUB_MODEL": "fake-model",
                       "BOTHUB_DATA_DIR": data, "BOTHUB_LOG_LEVEL": "WARNING", "PYTHONPATH": str(REPO)}
                proc = await asyncio.create_subprocess_exec(*command, env=env, cwd=data)
                try:
                    return await _drive(tg, proc, chats)
                finally:
                    if proc.returncode is None:
                        proc.terminate()
                        try:
                            await asyncio.wait_for(proc.wait(), 15)
                        except TimeoutError:
                            proc.kill()
                            await proc.wait()
    finally:
        await tg.stop()


async def _drive(tg: TimedTelegram, proc: asyncio.subprocess.Process, chats: list[int]) -> Outcome:
    await tg.wait_until(lambda: proc.returncode is not None or any(c.method == "getUpdates" for c in tg.calls),
                        within=60)
    if proc.returncode is not None:
        raise RuntimeError(f"the bot exited with status {proc.returncode} before polling")
    await asyncio.sleep(0.5)
    bot = psutil.Process(proc.pid)
    cpu_start = sum(bot.cpu_times()[:2])
    injected: dict[int, tuple[int, float]] = {}
    started = time.monotonic()
    for n in range(MESSAGES):
        await asyncio.sleep(max(0.0, started + n / RATE - time.monotonic()))
        chat = chats[n % len(chats)]
        text = question(n) if chat > 0 else f"{MENTION} {question(n)}"
        tg.inject_message(chat, text, chat_type="private" if chat > 0 else "supergroup")
        injected[n] = (chat, time.monotonic())

    def all_done() -> bool:
        finals = " ".join(s.changes[-1][1] for s in tg.shown.values())
        return len({int(n) for n in _TOKEN.findall(finals)}) >= MESSAGES and all(
            s.changes[-1][1].endswith("today") for s in tg.shown.values())

    with contextlib.suppress(AssertionError):
        await tg.wait_until(all_done, within=SETTLE)
    await asyncio.sleep(0.5)
    outcome = Outcome(injected, tg, sum(bot.cpu_times()[:2]) - cpu_start, _peak_rss(bot))
    outcome.analyse()
    return outcome


def report(sec: Section, label: str, out: Outcome, first_token_delay: float, *, targets: bool) -> None:
    first = list(out.first.values())
    done = list(out.complete.values())
    calls, too_many, other = out.api_calls()
    per_answer = out.cpu / max(out.answered, 1)
    sec.add(f"{label}: answered", f"{out.answered} / {MESSAGES}", str(MESSAGES) if targets else "",
            out.answered == MESSAGES if targets else None)
    bad = out.lost + out.duplicated + out.out_of_order + out.merged
    sec.add(f"{label}: lost / duplicated / out of order / merged",
            f"{out.lost} / {out.duplicated} / {out.out_of_order} / {out.merged}", "0" if targets else "",
            bad == 0 if targets else None)
    if targets:
        sec.check(f"{label}: throughput (offered {RATE:g}/s)", out.throughput(), RATE * 0.95, "msg/s", at_most=False)
    else:
        sec.add(f"{label}: throughput", f"{out.throughput():.1f} msg/s")
    limit_first = first_token_delay + 0.1
    # Each chat's first two questions get their first message out of its burst of 3 calls: "while it has budget".
    budgeted = [t for n, t in out.first.items() if n < 2 * CHATS]
    sec.add(f"{label}: first visible text p50 / p95 / p99 (all)",
            " / ".join(f"{percentile(first, p) * 1000:.0f}" for p in (50, 95, 99)) + " ms")
    sec.add(f"{label}: first visible text p50, chat with budget", f"{median(budgeted) * 1000:.0f} ms",
            f"≤ {limit_first * 1000:.0f} ms" if targets else "",
            median(budgeted) <= limit_first if targets and budgeted else None)
    sec.add(f"{label}: complete answer p50 / p95 / p99",
            " / ".join(f"{percentile(done, p):.2f}" for p in (50, 95, 99)) + " s",
            "p95 ≤ 3 s" if targets and first_token_delay >= 0.2 else "",
            percentile(done, 95) <= 3 if targets and first_token_delay >= 0.2 else None)
    share = too_many / max(calls, 1) * 100
    sec.add(f"{label}: Bot API calls / 429s / other 4xx", f"{calls} / {too_many} ({share:.1f} %) / {other}",
            "429 ≤ 1 %" if targets else "", share <= 1 if targets else None)
    if isinstance(out.tg.flood, CountingFlood) and out.tg.flood.causes:
        sec.add(f"{label}: 429s by rule", ", ".join(f"{k} {v}" for k, v in sorted(out.tg.flood.causes.items())))
    sec.add(f"{label}: bot CPU per answered message", f"{per_answer * 1000:.1f} ms")
    sec.add(f"{label}: peak RSS", f"{out.peak_rss / 2**20:.0f} MB", "≤ 150 MB" if targets else "",
            out.peak_rss <= 150 * 2**20 if targets else None)


BOTHUB = [sys.executable, "-m", "bot", "run"]
BASELINE = [sys.executable, "-m", "bench.baseline_bot"]


async def run() -> Section:
    sec = Section(f"Telegram end to end: {MESSAGES} messages, 20 chats, {RATE:g} msg/s, flood-limited fake Bot API")
    sec.notes.append(f"Fake LLM streams the 8-word question back, one word per chunk, {WORDS_DELAY * 1000:.0f} ms "
                     "apart; latencies are measured in the fake Bot API from injection to a landed call.")
    ours: dict[float, Outcome] = {}
    for delay in (0.0, 0.2):
        ours[delay] = await load(BOTHUB, delay)
        report(sec, f"bothub, first token {delay * 1000:.0f} ms", ours[delay], delay, targets=True)
    base = await load(BASELINE, 0.2)
    report(sec, "baseline bot, first token 200 ms", base, 0.2, targets=False)
    ratio_cpu = (ours[0.2].cpu / max(ours[0.2].answered, 1)) / max(base.cpu / max(base.answered, 1), 1e-9)
    sec.check("bothub / baseline: CPU per answered message", ratio_cpu, 2, "×", fmt=".2f")
    sec.add("bothub / baseline: peak RSS", f"{ours[0.2].peak_rss / max(base.peak_rss, 1):.2f} ×")
    sec.add("bothub / baseline: complete answer p50",
            f"{median(list(ours[0.2].complete.values())) / max(median(list(base.complete.values())), 1e-9):.2f} ×")
    return sec


if __name__ == "__main__":
    run_standalone(run)
