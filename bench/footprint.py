"""Footprint of a real `bothub run` with Telegram, Discord and Feishu against their fakes: start-up and memory.

Start-up: from spawning the process to /readyz answering 200 (every platform connected) with 10⁵ messages
stored. Memory: then 1 000 chats (Telegram private chats, Discord DMs, Feishu one-to-one chats over the
long connection), each with 100 stored messages, ask at once while the fake LLM holds every answer for a
second, so all 1 000 runs are in flight together; peak RSS (VmHWM) once every chat shows its answer.
The platform fakes' rate limits are off here: this measures the bot's footprint, not pacing.
"""

from __future__ import annotations

import asyncio
import compileall
import contextlib
import os
import socket
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import psutil
import yaml

from bench.common import Section, end_process, fake_llm, median, run_standalone
from bench.store import linear
from bot.store.sqlite import SqliteStore
from tests.fakes import discord_api, feishu_api, telegram_api

REPO = Path(__file__).resolve().parents[1]
CHATS = {"telegram": 400, "discord": 300, "feishu": 300}
STORED_PER_CHAT = 100  # 1 000 chats × 100 = 10⁵ stored messages
FIRST_TOKEN = 1.0  # seconds the fake LLM waits before answering: every run is in flight at once
READY_WITHIN = 60.0
ANSWERED_WITHIN = 120.0
POLL = 0.25
RSS_LIMIT_MB = 120
BOTHUB = [sys.executable, "-m", "bot"]
READY_LIMIT_S = 1.0
STARTS = 5  # start-ups measured, the median reported: on a shared machine one start-up's wall time varies 2×


# What `bothub run` with three platforms imports: the Telegram adapter as its spec imports it (bot/adapter.py:
# `imported`, without the extras python-telegram-bot would load and bothub never uses)
RUN_LABEL = "bot.cli.main, adapters.telegram.adapter, adapters.discord.adapter, adapters.feishu.adapter"
RUN_IMPORTS = ("import importlib, bot.cli.main, adapters.discord.adapter, adapters.feishu.adapter\n"
               "from adapters.telegram import UNUSED_EXTRAS\nfrom bot.adapter import hidden\n"
               "with hidden(UNUSED_EXTRAS):\n    importlib.import_module('adapters.telegram.adapter')")
IMPORTS = {  # module → why it is listed
    "lark_oapi": "no longer imported (the Feishu adapter speaks the protocols itself)",
    "openai": "no longer imported (bothub speaks the chat API itself, bot/agent/http1.py)", "discord": "",
    "telegram.ext": "as a bare import; `bothub run` leaves out cryptography and click (see below)", "aiohttp": "",
    "asyncpg": "only for a postgresql:// store", "pypdf": "with the first PDF", "PIL.Image": "with the first image",
    "croniter": "with the first cron spec",
    "cryptography.hazmat.primitives.ciphers": "with the first encrypted Feishu webhook",
    "jinja2": "with the first dashboard page", "adapters.feishu.adapter": "", "bot.app": "",
    RUN_LABEL: "what `bothub run` with three platforms imports",
}
IMPORT_CODE = {RUN_LABEL: RUN_IMPORTS}
IMPORT_PROBE = ("import time\nt = time.process_time()\n{code}\ncpu = (time.process_time() - t) * 1000\n"
                "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
                "print(cpu, int(hwm.split()[1]) / 1024)")  # VmHWM, not ru_maxrss: that counts the forked parent


async def import_cost(module: str) -> tuple[float, float]:
    """(peak RSS in MB, CPU ms) of importing `module` into a fresh interpreter; the best of three."""
    best = (float("inf"), 0.0)
    code = IMPORT_CODE.get(module, f"import {module}")
    for _ in range(3):
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", IMPORT_PROBE.format(code=code), cwd=REPO,
                                                    stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        cpu, rss = (float(x) for x in out.split())
        best = min(best, (cpu, rss))
    return best[1], best[0]


def chat_ids() -> dict[str, list[str]]:
    return {"telegram": [str(20_001 + i) for i in range(CHATS["telegram"])],
            "discord": [str(810_000_000_000_000_000 + i) for i in range(CHATS["discord"])],
            "feishu": [f"oc_p2p_{i:04d}" for i in range(CHATS["feishu"])]}


def question(platform: str, n: int) -> str:
    return f"{platform} chat {n} asks about the weather"


async def fill(db: Path) -> int:
    """Each of the 1 000 chats gets a stored conversation of STORED_PER_CHAT messages, as its active one: the
    question continues it, so every run loads and sends that history."""
    store = SqliteStore(db)
    await store.open()
    stored = 0
    try:
        for platform, ids in chat_ids().items():
            for chat in ids:
                key = f"{platform}:{chat}"
                info = await store.conversations.import_tree(key, linear(STORED_PER_CHAT, seed=0))
                await store.conversations.set_active(key, info.id)
                stored += STORED_PER_CHAT
    finally:
        await store.close()
    return stored


def compile_bytecode() -> None:
    """bothub's own modules compiled as an install leaves them (pip does the same for the libraries; the Docker
    image runs compileall): a start then reads bytecode, whatever PYTHONDONTWRITEBYTECODE says here. Without it a
    start compiles ~180 modules first (≈ 0.15 s of CPU)."""
    for package in ("bot", "adapters"):
        compileall.compile_dir(REPO / package, quiet=1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Fakes:
    telegram: telegram_api.FakeTelegram
    discord: discord_api.FakeDiscord
    feishu: feishu_api.FakeFeishu

    def env(self) -> dict[str, str]:
        return {"TELEGRAM_BOT_TOKEN": telegram_api.TOKEN, "TELEGRAM_API_BASE": self.telegram.api_base,
                "DISCORD_BOT_TOKEN": discord_api.TOKEN, "DISCORD_API_BASE": self.discord.api_base,
                "DISCORD_GATEWAY_URL": self.discord.gateway_url,
                "FEISHU_APP_ID": feishu_api.APP_ID, "FEISHU_APP_SECRET": feishu_api.APP_SECRET,
                "FEISHU_DOMAIN": self.feishu.domain}

    async def ask_all(self) -> None:
        ids = chat_ids()
        for n, chat in enumerate(ids["telegram"]):
            self.telegram.inject_message(int(chat), question("telegram", n), chat_type="private")
        for n, chat in enumerate(ids["discord"]):
            author = {**discord_api.HUMAN, "id": str(700_000_000_000_100_000 + n), "username": f"user{n}"}
            data = self.discord.user_message(question("discord", n), dm=True, author=author)
            await self.discord.dispatch("MESSAGE_CREATE", {**data, "channel_id": chat})
        for n, chat in enumerate(ids["feishu"]):
            event = self.feishu.incoming(f"fp-{n}", chat_type="p2p", chat_id=chat, text=question("feishu", n))
            await self.feishu.push_ws_event(event)

    def answered(self) -> int:
        ids = chat_ids()
        done = sum(any(t.endswith(question("telegram", n)) for t in self.telegram.bot_texts(int(chat)))
                   for n, chat in enumerate(ids["telegram"]))
        discord_done = {m["channel_id"] for m in self.discord.messages.values()
                        if str(m.get("content", "")).endswith("weather")}
        done += sum(chat in discord_done for chat in ids["discord"])
        return done + sum(any(t.strip().endswith(question("feishu", n)) for t in self.feishu.shown(chat))
                          for n, chat in enumerate(ids["feishu"]))


@contextlib.asynccontextmanager
async def fakes() -> AsyncIterator[Fakes]:
    tg, dc, fs = telegram_api.FakeTelegram(), discord_api.FakeDiscord(), feishu_api.FakeFeishu()
    tg.flood = None  # footprint, not pacing (see the module docstring); Discord limits per channel, each DM its own
    for server in (tg, dc, fs):
        await server.start()
    try:
        yield Fakes(tg, dc, fs)
    finally:
        for server in (tg, dc, fs):
            await server.stop()


def peak_rss(pid: int) -> float:
    """VmHWM: the most resident memory the process has had, in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) * 1024
    return 0.0


async def wait_ready(port: int, proc: asyncio.subprocess.Process) -> float:
    """Seconds from now until /readyz says ready (polled every 10 ms)."""
    started = time.monotonic()
    async with aiohttp.ClientSession() as session:
        while time.monotonic() - started < READY_WITHIN:
            if proc.returncode is not None:
                raise RuntimeError(f"bothub exited with status {proc.returncode} before it was ready")
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(f"http://127.0.0.1:{port}/readyz") as resp:
                    if resp.status == 200:
                        return time.monotonic() - started
            await asyncio.sleep(0.01)
    raise RuntimeError(f"not ready within {READY_WITHIN:.0f} s")


@dataclass
class Outcome:
    ready: list[float]  # each start-up's wall time
    ready_cpu: list[float]
    rss_ready: float
    answered: int
    answer_time: float
    peak: float
    cpu: float


async def start(config: Path, env: dict[str, str], work: Path, port: int) -> tuple[asyncio.subprocess.Process, float]:
    """A `bothub run` process and its seconds from spawning to /readyz 200."""
    spawned = time.monotonic()
    proc = await asyncio.create_subprocess_exec(*BOTHUB, "--config", str(config), "run", env=env, cwd=work)
    try:
        await wait_ready(port, proc)
    except BaseException:
        await end_process(proc, 20)
        raise
    return proc, time.monotonic() - spawned


async def measure(work: Path, servers: Fakes, llm_url: str) -> Outcome:
    port = free_port()
    config = work / "bothub.yaml"
    config.write_text(yaml.safe_dump({
        "data_dir": str(work / "data"), "log_level": "WARNING", "server": {"port": port},
        "platforms": ["telegram", "discord", "feishu"], "max_queue": 10}), encoding="utf-8")
    env = {**os.environ, **servers.env(), "OPENAI_BASE_URL": llm_url, "OPENAI_API_KEY": "test-key",
           "BOTHUB_MODEL": "fake-model", "PYTHONPATH": str(REPO)}
    compile_bytecode()
    ready: list[float] = []
    ready_cpu: list[float] = []
    for _ in range(STARTS - 1):  # start-ups only; the last one also answers
        proc, wall = await start(config, env, work, port)
        ready.append(wall)
        ready_cpu.append(sum(psutil.Process(proc.pid).cpu_times()[:2]))
        await end_process(proc, 20)
    proc, wall = await start(config, env, work, port)
    try:
        bot = psutil.Process(proc.pid)
        rss_ready = float(bot.memory_info().rss)
        cpu_start = sum(bot.cpu_times()[:2])  # all of it spent starting up
        ready.append(wall)
        ready_cpu.append(cpu_start)
        asked = time.monotonic()
        await servers.ask_all()
        for _ in range(int(ANSWERED_WITHIN / POLL)):  # answered() reads every chat: not every few ms
            if servers.answered() >= sum(CHATS.values()):
                break
            await asyncio.sleep(POLL)
        return Outcome(ready, ready_cpu, rss_ready, servers.answered(), time.monotonic() - asked,
                       peak_rss(proc.pid), sum(bot.cpu_times()[:2]) - cpu_start)
    finally:
        await end_process(proc, 20)


async def run() -> Section:
    total = sum(CHATS.values())
    sec = Section(f"Footprint: `bothub run` with Telegram, Discord and Feishu, {total} active chats")
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        (work / "data").mkdir(mode=0o700)
        stored = await fill(work / "data" / "bothub.sqlite3")
        async with fake_llm(0.0, FIRST_TOKEN) as llm_url, fakes() as servers:
            out = await measure(work, servers, llm_url)
    sec.check(f"start-up to ready (/readyz 200), three platforms, {stored} messages stored: median of {STARTS}",
              median(out.ready), READY_LIMIT_S, "s", fmt=".2f")
    sec.add("  fastest and slowest of them (wall; the machine is shared)",
            f"{min(out.ready):.2f} s / {max(out.ready):.2f} s")
    sec.add("  bot CPU until ready (user + system): median", f"{median(out.ready_cpu):.2f} s")
    sec.add("RSS when ready", f"{out.rss_ready / 2**20:.0f} MB")
    sec.add(f"answered ({', '.join(f'{k} {v}' for k, v in CHATS.items())})", f"{out.answered} / {total}",
            str(total), out.answered == total)
    sec.add(f"all {total} answered after (LLM first token {FIRST_TOKEN:g} s)", f"{out.answer_time:.1f} s")
    sec.add("bot CPU per answer", f"{out.cpu / max(out.answered, 1) * 1000:.1f} ms")
    sec.check(f"peak RSS (VmHWM), {total} chats in flight at once", out.peak / 2**20, RSS_LIMIT_MB, "MB", fmt=".0f")
    bare, _ = await import_cost("sys")
    for module, why in IMPORTS.items():
        rss, cpu = await import_cost(module)
        sec.add(f"import {module}" + (f" ({why})" if why else ""), f"{rss:.0f} MB peak RSS, {cpu:.0f} ms CPU")
    sec.notes.append(f"Imports: a fresh interpreter per module (bare: {bare:.0f} MB), the best of three. Before "
                     "this round (main at b1fd6c4, same method): adapters.feishu.adapter 194 MB / 2 722 ms; bot.app "
                     "76 MB / 1 027 ms; everything `run` imports with three platforms 246 MB / 3 603 ms; at e680855: "
                     "86 MB / 703 ms.")
    sec.notes.append("Each chat's 100 stored messages are its active conversation, so every run loads and sends them "
                     "(before 2026-12-01 they were stored but not active: runs started empty, peak 163 MB then). "
                     "bothub's own modules start from bytecode, as installed (pip compiles the libraries; the Docker "
                     "image runs compileall): compiling ~180 modules at every start would add ≈ 0.15 s of CPU.")
    sec.notes.append("Platform fakes run in the benchmark's process, the fake LLM in its own; the bot is a separate "
                     "`python -m bot run`. Rate limits of the fakes are off: this is footprint, not pacing.")
    return sec


if __name__ == "__main__":
    run_standalone(run)
