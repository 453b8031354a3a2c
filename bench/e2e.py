"""End to end on one platform: a bot as a real subprocess against the platform's strict fake, under a load.

Shared by bench/telegram_e2e.py, discord_e2e.py and feishu_e2e.py. A platform gives a `Rig`: its fake, timed
(every landed send or edit is noted with what the user now sees there), the chats, and how a user's message
is injected. The fake LLM runs in its own process and echoes each question word by word, so an answer is
found by its token `q<n>` and is complete once a bot message ends with the whole question. Latencies are
measured in the fake from injection to a landed call: where a user would see them.
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
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from bench.common import end_process, fake_llm

REPO = Path(__file__).resolve().parents[1]
WORDS_DELAY = 0.05  # seconds between streamed words
SETTLE = 65.0  # seconds allowed after the last injection for every answer to complete: a Telegram group's
# window (20 new messages a minute, bothub keeps 10 % in reserve) can hold an answer for up to a minute
READY_WITHIN = 60.0
WARM_UP = 99_999  # the question number of the warm-up, never part of a load
_TOKEN = re.compile(r"\bq(\d+)\b")
LONG_WORD = "forecast-for-the-coming-week-with-every-detail-you-know"  # 55 characters: long answers, few chunks
LONG_WORDS = 26  # ≈ 1 500 characters: long, yet one message on every platform


def question(n: int, long: bool = False) -> str:
    """What user n asks; the fake LLM answers with exactly this text (8 words, or ≈ 1 500 characters)."""
    tail = " ".join([LONG_WORD] * LONG_WORDS) if long else "please tell me about the weather today"
    return f"q{n} {tail}"


@dataclass(frozen=True)
class Chat:
    """One conversation: `where` names it (chat, or chat/thread); kind is dm, group or thread."""

    where: str
    kind: str


@dataclass(frozen=True)
class Ask:
    at: float  # seconds after the load starts
    chat: Chat
    n: int
    long: bool = False

    @property
    def text(self) -> str:
        return question(self.n, self.long)


@dataclass(frozen=True)
class Load:
    name: str
    asks: list[Ask]
    short: bool  # every answer is short: the "platform calls per short answer" target applies


def steady(chats: list[Chat], messages: int = 200, rate: float = 20.0) -> Load:
    """`messages` short questions round-robin over the chats at a fixed rate."""
    asks = [Ask(n / rate, chats[n % len(chats)], n) for n in range(messages)]
    return Load(f"steady: {messages} short questions over {len(chats)} chats at {rate:g} msg/s", asks, short=True)


def pressing(chats: list[Chat], seconds: float = 20.0, group_per_minute: float = 24.0, burst: int = 10) -> Load:
    """What presses a platform's limits: every group and thread at `group_per_minute` new messages, a burst of
    `burst` questions into one DM at once, and a long answer twice in every other DM."""
    groups = [c for c in chats if c.kind != "dm"]
    dms = [c for c in chats if c.kind == "dm"]
    n = itertools.count()
    asks = [Ask(0.0, dms[0], next(n)) for _ in range(burst)]
    interval = 60.0 / group_per_minute
    for i, chat in enumerate(groups):
        offset = i * interval / len(groups)  # spread the groups over one interval
        asks += [Ask(offset + k * interval, chat, next(n)) for k in range(int(seconds / interval))]
    for i, chat in enumerate(dms[1:]):
        asks += [Ask(i * 0.1 + at, chat, next(n), long=True) for at in (0.0, seconds / 2)]
    asks.sort(key=lambda a: a.at)
    return Load(f"pressing: groups and threads at {group_per_minute:g} msg/min for {seconds:g} s, a burst of "
                f"{burst} into one DM, {2 * (len(dms) - 1)} long answers in the other DMs", asks, short=False)


@dataclass
class Shown:
    """One bot message as it changed: (time, visible text) per landed send or edit."""

    where: str
    changes: list[tuple[float, str]] = field(default_factory=list)


@dataclass
class Calls:
    total: int = 0  # platform calls by the bot, polling and start-up excluded
    too_many: int = 0  # answered 429
    other_4xx: int = 0

    @classmethod
    def counted(cls, statuses: Mapping[str, Mapping[int, int]], skip: Container[str]) -> Calls:
        """From a fake's (method → status → count), leaving out the methods in `skip` (polling, start-up)."""
        calls = cls()
        for method, by_status in statuses.items():
            if method in skip:
                continue
            for status, count in by_status.items():
                calls.total += count
                calls.too_many += count if status == 429 else 0
                calls.other_4xx += count if 400 <= status < 500 and status != 429 else 0
        return calls


class Rig(ABC):
    """One platform's fake for one run; `shown` fills as bot messages land."""

    platform: str

    def __init__(self) -> None:
        self.shown: dict[object, Shown] = {}

    def note(self, key: object, where: str, text: str) -> None:
        self.shown.setdefault(key, Shown(where)).changes.append((time.monotonic(), text))

    @abstractmethod
    async def start(self) -> None: ...

    @abstractmethod
    async def stop(self) -> None: ...

    @abstractmethod
    def env(self) -> dict[str, str]: ...

    @abstractmethod
    def ready(self) -> bool:
        """The bot is connected and would see an injected message."""

    @abstractmethod
    async def inject(self, ask: Ask) -> None: ...

    @abstractmethod
    def calls(self) -> Calls: ...

    def rate_limit_causes(self) -> dict[str, int]:
        return {}


@dataclass(frozen=True)
class Bot:
    label: str
    command: list[str]
    settle_after_ready: float = 0.5  # seconds between "connected" and the first question


@dataclass
class Outcome:
    load: Load
    calls: Calls
    cpu: float  # bot process CPU seconds during the load
    peak_rss: float  # bytes
    causes: dict[str, int]
    first: dict[int, float] = field(default_factory=dict)  # question → seconds to first visible text
    complete: dict[int, float] = field(default_factory=dict)  # question → seconds to the complete answer
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    merged: int = 0
    ends: list[float] = field(default_factory=list)

    @property
    def asked(self) -> int:
        return len(self.load.asks)

    @property
    def answered(self) -> int:
        return len(self.complete)

    def throughput(self) -> float:
        """Answers per second between the first and the last completed answer."""
        ends = sorted(self.ends)
        return (len(ends) - 1) / (ends[-1] - ends[0]) if len(ends) > 1 else 0.0


def analyse(load: Load, injected: dict[int, float], shown: dict[object, Shown], outcome: Outcome) -> None:
    asks = {a.n: a for a in load.asks}
    holders: dict[int, int] = defaultdict(int)  # question → bot messages holding it
    firsts: dict[str, list[tuple[float, int]]] = defaultdict(list)  # where → (first shown, question) per message
    for message in shown.values():
        found = sorted({int(n) for n in _TOKEN.findall(message.changes[-1][1])} & asks.keys())
        outcome.merged += len(found) > 1
        if found:
            firsts[message.where].append((message.changes[0][0], found[0]))
        for n in found:
            holders[n] += 1
            text = asks[n].text
            done = next((t for t, shown_text in message.changes if shown_text.rstrip().endswith(text)), None)
            if n in injected and n not in outcome.complete and done is not None:
                token = re.compile(rf"\bq{n}\b")  # a placeholder before the answer's own words does not count
                seen = next(t for t, shown_text in message.changes if token.search(shown_text))
                outcome.first[n] = seen - injected[n]
                outcome.complete[n] = done - injected[n]
                outcome.ends.append(done)
    outcome.lost = sum(1 for n in injected if n not in outcome.complete)
    outcome.duplicated = sum(1 for count in holders.values() if count > 1)
    for messages in firsts.values():
        order = [n for _, n in sorted(messages)]
        outcome.out_of_order += sum(1 for a, b in itertools.pairwise(order) if b < a)


def peak_rss(pid: int) -> float:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) * 1024
    return 0.0


async def measure(make_rig: Callable[[], Rig], bot: Bot, load: Load, first_token: float) -> Outcome:
    """Start a fresh fake, the fake LLM and the bot; run the load; measure; stop everything."""
    rig = make_rig()
    await rig.start()
    try:
        async with fake_llm(WORDS_DELAY, first_token) as llm_url:
            with tempfile.TemporaryDirectory() as data:
                config = Path(data) / "bench.yaml"
                config.write_text("server:\n  port: 0\n", encoding="utf-8")  # other benchmarks may hold 8080
                env = {**os.environ, **rig.env(), "OPENAI_BASE_URL": llm_url, "OPENAI_API_KEY": "test-key",
                       "BOTHUB_MODEL": "fake-model", "BOTHUB_DATA_DIR": data, "BOTHUB_LOG_LEVEL": "WARNING",
                       "BOTHUB_CONFIG": str(config), "PYTHONPATH": str(REPO)}
                proc = await asyncio.create_subprocess_exec(*bot.command, env=env, cwd=data)
                try:
                    return await _drive(rig, proc, bot, load)
                finally:
                    await end_process(proc, 15)
    finally:
        await rig.stop()


async def _wait(predicate: Callable[[], bool], within: float, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(interval)
    return True


async def _drive(rig: Rig, proc: asyncio.subprocess.Process, bot: Bot, load: Load) -> Outcome:
    await _wait(lambda: proc.returncode is not None or rig.ready(), READY_WITHIN)
    if proc.returncode is not None or not rig.ready():
        raise RuntimeError(f"{bot.label} on {rig.platform}: not connected (exit status {proc.returncode})")
    await asyncio.sleep(bot.settle_after_ready)
    # One question answered before measuring: every bot pays its first-use costs (the openai SDK builds its
    # types on the first request, lark-oapi fetches a token) outside the figures.
    warm_up = Ask(0.0, next(c for c in {a.chat for a in load.asks} if c.kind == "dm"), WARM_UP)
    await rig.inject(warm_up)
    if not await _wait(lambda: any(s.changes[-1][1].rstrip().endswith(warm_up.text) for s in rig.shown.values()),
                       READY_WITHIN, interval=0.05):
        raise RuntimeError(f"{bot.label} on {rig.platform}: the warm-up question was not answered")
    bot_process = psutil.Process(proc.pid)
    cpu_start = sum(bot_process.cpu_times()[:2])
    calls_before = rig.calls()
    injected: dict[int, float] = {}
    started = time.monotonic()
    for ask in load.asks:
        await asyncio.sleep(max(0.0, started + ask.at - time.monotonic()))
        await rig.inject(ask)
        injected[ask.n] = time.monotonic()
    texts = {a.n: a.text for a in load.asks}

    def all_done() -> bool:
        finished = {int(n) for s in rig.shown.values() for text in [s.changes[-1][1]] for n in _TOKEN.findall(text)
                    if int(n) in texts and texts[int(n)] in text}
        return len(finished) == len(texts)

    await _wait(all_done, SETTLE, interval=0.1)
    await asyncio.sleep(0.5)  # a late duplicate would land now
    after = rig.calls()
    calls = Calls(after.total - calls_before.total, after.too_many - calls_before.too_many,
                  after.other_4xx - calls_before.other_4xx)
    outcome = Outcome(load, calls, sum(bot_process.cpu_times()[:2]) - cpu_start, peak_rss(proc.pid),
                      rig.rate_limit_causes())
    analyse(load, injected, rig.shown, outcome)
    return outcome


def python(*module: str) -> list[str]:
    return [sys.executable, "-m", *module]
