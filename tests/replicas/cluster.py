"""Replicas as real `bothub run` processes on one PostgreSQL, and a round-robin load balancer in front."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import re
import signal
import sys
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import yaml
from aiohttp import web

from bot.store.claims import PARTITIONS, Claims
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.serve import serve_local
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import wait_for

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Replica:
    name: str
    proc: asyncio.subprocess.Process
    port: int
    log: Path

    async def readyz(self) -> dict[str, Any]:
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{self.port}/readyz") as response:
            body: dict[str, Any] = await response.json()
            return body

    async def replica(self) -> dict[str, Any]:
        return dict((await self.readyz())["replica"])

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def cpu_seconds(self) -> float:
        """User + system CPU the process used so far (from /proc, in clock ticks)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def replica_env(llm: FakeOpenAI, database_url: str, name: str, platform_env: Mapping[str, str]) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items()
                 if not k.startswith(("BOTHUB_", "OPENAI_", "TELEGRAM_", "DISCORD_", "FEISHU_", "SLACK_"))}
    return {**inherited, "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test-key", "BOTHUB_MODEL": "fake-model",
            "BOTHUB_DATABASE_URL": database_url, "BOTHUB_REPLICA_ID": name, "BOTHUB_LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1", **platform_env}


async def start_replica(tmp: Path, name: str, llm: FakeOpenAI, database_url: str, platform_env: Mapping[str, str],
                        settings: Mapping[str, Any]) -> Replica:
    """`python -m bot run` with its own data folder, its web server on a free port (read from its log);
    returns once /readyz says ready."""
    folder = tmp / name
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "bothub.yaml"
    config.write_text(yaml.safe_dump({"data_dir": str(folder / "data"),
                                      "server": {"host": "127.0.0.1", "port": 0}, **settings}), encoding="utf-8")
    config.chmod(0o600)
    log = folder / "bothub.log"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "--config", str(config), "run", cwd=REPO,
            env=replica_env(llm, database_url, name, platform_env), stdin=asyncio.subprocess.DEVNULL,
            stdout=out, stderr=asyncio.subprocess.STDOUT)
    replica = Replica(name, proc, 0, log)
    deadline = time.monotonic() + 60
    while True:
        if proc.returncode is not None or time.monotonic() > deadline:
            raise AssertionError(f"replica {name} did not come up: {log.read_text()[-3000:]}")
        if not replica.port and (bound := re.search(r"web server on 127\.0\.0\.1:(\d+)", log.read_text())):
            replica.port = int(bound[1])
        if replica.port:
            with contextlib.suppress(aiohttp.ClientError, ValueError):
                if (await replica.readyz())["ready"]:
                    return replica
        await asyncio.sleep(0.1)


async def stop_replica(replica: Replica) -> None:
    if replica.proc.returncode is None:
        replica.resume()  # a paused process cannot handle SIGTERM
        replica.proc.terminate()
        try:
            await asyncio.wait_for(replica.proc.wait(), 20)
        except TimeoutError:
            replica.kill()
            await replica.proc.wait()


@contextlib.asynccontextmanager
async def replicas(tmp: Path, names: tuple[str, ...], llm: FakeOpenAI, database_url: str,
                   platform_env: Mapping[str, str], settings: Mapping[str, Any]) -> AsyncIterator[list[Replica]]:
    started: list[Replica] = []
    try:
        for name in names:  # one after the other: the first takes the roles, the next gets its share
            started.append(await start_replica(tmp, name, llm, database_url, platform_env, settings))
        await balanced(started)
        yield started
    finally:
        for replica in started:
            await stop_replica(replica)


@contextlib.asynccontextmanager
async def behind_balancer(tmp: Path, names: tuple[str, ...], llm: FakeOpenAI, tg: FakeTelegram,
                          balancer: RoundRobin, database_url: str, telegram: dict[str, Any] | None = None,
                          more: Mapping[str, Any] | None = None) -> AsyncIterator[list[Replica]]:
    """Replicas with Telegram in webhook mode, every one of them behind `balancer` (Telegram's webhook URL);
    `telegram`: more of their telegram settings, `more`: other sections."""
    env = {"TELEGRAM_BOT_TOKEN": tg.token, "TELEGRAM_API_BASE": tg.api_base, "TELEGRAM_WEBHOOK_SECRET": "hook-secret"}
    settings = {"telegram": {"webhook_url": f"{balancer.url}/telegram/webhook", **(telegram or {})}, **(more or {})}
    async with replicas(tmp, names, llm, database_url, env, settings) as started:
        balancer.backends += [f"http://127.0.0.1:{r.port}" for r in started]
        yield started


async def inbox_drained(database_url: str, within: float = 20.0) -> None:
    """Wait until every accepted entry is finished: no reply is then between being sent and being recorded,
    the one moment a kill makes a replica answer twice (README, "Scaling out")."""
    conn = await asyncpg.connect(database_url)
    try:
        deadline = time.monotonic() + within
        while await conn.fetchval("SELECT count(*) FROM inbox"):
            assert time.monotonic() < deadline, "the inbox never drained"
            await asyncio.sleep(0.05)
    finally:
        await conn.close()


def timed_sends(tg: FakeTelegram) -> dict[int, list[float]]:
    """Record when each sendMessage reached the fake, by chat (monotonic clock)."""
    sent_at: dict[int, list[float]] = {}
    send = tg._m_sendMessage

    async def timed_send(params: dict[str, Any]) -> dict[str, Any]:
        result = await send(params)
        sent_at.setdefault(int(params["chat_id"]), []).append(time.monotonic())
        return result

    tg._m_sendMessage = timed_send  # type: ignore[method-assign]
    return sent_at


def failover_time(sent_at: dict[int, list[float]], killed_at: float, orphaned: set[int]) -> float:
    """Seconds from the kill to the first answer in a chat the killed replica owned."""
    return min(t for c in orphaned for t in sent_at.get(c, []) if t > killed_at) - killed_at


async def kill_between_replies(victim: Replica, tg: FakeTelegram, url: str) -> tuple[float, set[int]]:
    """SIGKILL `victim` at a moment when every reply it made is also finished in the inbox; returns the
    kill's time and the chats it owned."""
    owned = await pause_between_replies(victim, tg, url)
    victim.kill()
    return time.monotonic(), owned


def answers(tg: FakeTelegram, chat: int) -> list[str]:
    """The bot's answers to messages in a chat (echoes of `question`), not its reminders."""
    return [text for text in tg.bot_texts(chat) if text.startswith("q")]


async def pause_between_replies(victim: Replica, tg: FakeTelegram, url: str) -> set[int]:
    """SIGSTOP `victim` at a moment when every answer it made is also finished in the inbox (outside the window
    where a reply is sent twice, README "Scaling out"); returns the chats it owned."""
    db = await asyncpg.connect(url)
    try:
        for _ in range(200):
            owned = {int(s.split(":")[1]) for s in (await victim.replica())["chats"]}
            # not at once: the signal would land just after the victim's loop wrote /readyz's answer, in the same
            # turn of its loop as the steps of its runs — often right between a send's last fence check and its
            # bytes (the window README "Scaling out" names), which is not the freeze this stands for
            await asyncio.sleep(random.uniform(0.002, 0.03))
            victim.pause()
            await asyncio.sleep(0.05)  # requests it sent before the pause reach the fake
            accepted = dict(await db.fetch("SELECT split_part(key, ':', 2)::bigint, count(*) FROM seen_events "
                                           "WHERE key LIKE 'telegram:%' GROUP BY 1"))  # messages, not job runs
            waiting = dict(await db.fetch("SELECT split_part(session, ':', 2)::bigint, count(*) FROM inbox "
                                          "WHERE job IS NULL GROUP BY 1"))
            runs = {r[0] for r in await db.fetch("SELECT DISTINCT split_part(session, ':', 2)::bigint FROM inbox "
                                                 "WHERE job IS NOT NULL")}  # chats with a job's run not finished
            # a run whose reminder is out while its entry is not finished is in that window too (a test chat has
            # one job at most, so any text there that answers no message is its reminder)
            sent_unfinished = {c for c in runs if len(tg.bot_texts(c)) > len(answers(tg, c))}
            unanswered = {c for c in owned if len(answers(tg, c)) != accepted.get(c, 0) - waiting.get(c, 0)}
            if not unanswered and not owned & sent_unfinished:
                return owned
            victim.resume()
            await asyncio.sleep(0.01)
        entries = "SELECT id, job, replies FROM inbox WHERE session = $1"
        stuck = {c: (tg.bot_texts(c), [tuple(r) for r in await db.fetch(entries, f"telegram:{c}")])
                 for c in owned & sent_unfinished}
        raise AssertionError(f"the replica was never between replies: unanswered {sorted(unanswered)[:5]}, a job's "
                             f"reply out and its entry waiting: {stuck}")
    finally:
        await db.close()


def question(chat: int, n: int) -> str:
    return f"q{chat}-{n}"


async def send_with_a_kill(tg: FakeTelegram, chats: range, per_chat: int, rate: float, victim: Replica,
                           database_url: str) -> tuple[float, set[int]]:
    """`per_chat` messages into every chat, round after round at a steady `rate`, SIGKILLing `victim` halfway
    (between two of its replies); returns the kill's time and the chats the victim owned."""
    started, total = time.monotonic(), len(chats) * per_chat
    killed: tuple[float, set[int]] = (0.0, set())
    for i, (chat, n) in enumerate(rounds(chats, per_chat)):
        tg.inject_message(chat, question(chat, n))
        if i == total // 2:
            killed = await kill_between_replies(victim, tg, database_url)
        await asyncio.sleep(max(0.0, started + (i + 1) / rate - time.monotonic()))
    return killed


async def send_with_a_freeze(tg: FakeTelegram, chats: range, per_chat: int, rate: float, victim: Replica,
                             database_url: str) -> tuple[float, set[int]]:
    """`per_chat` messages into every chat at a steady `rate`, SIGSTOPping `victim` halfway, between two of its
    replies (it stays frozen); returns the freeze's time and the chats the victim owned."""
    started, order = time.monotonic(), rounds(chats, per_chat)
    frozen: tuple[float, set[int]] = (0.0, set())
    for i, (chat, n) in enumerate(order):
        tg.inject_message(chat, question(chat, n))
        if i == len(order) // 2:
            owned = await pause_between_replies(victim, tg, database_url)
            frozen = (time.monotonic(), owned)
        await asyncio.sleep(max(0.0, started + (i + 1) / rate - time.monotonic()))
    return frozen


def rounds(chats: range, per_chat: int) -> list[tuple[int, int]]:
    """(chat, n): message n into every chat, round after round, each round in another (seeded) order, so that
    a chat's messages reach different replicas behind a round-robin balancer."""
    shuffle = random.Random(15).shuffle
    order = []
    for n in range(per_chat):
        round_ = list(chats)
        shuffle(round_)
        order += [(chat, n) for chat in round_]
    return order


class RoundRobin:
    """A load balancer: each request to the next backend in turn; a backend that refuses the connection
    (a dead replica) or does not answer within `upstream_timeout` (a frozen one) is skipped for the next one,
    as a proxy's `next upstream on error, timeout` does."""

    def __init__(self, backends: list[str], upstream_timeout: float = 5.0) -> None:
        self.backends = backends
        self.upstream_timeout = aiohttp.ClientTimeout(total=upstream_timeout)
        self.port = 0
        self.forwarded: list[str] = []  # the backend that answered each request
        self._next = 0
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner, self.port = await serve_local(app)
        self._http = aiohttp.ClientSession()

    async def stop(self) -> None:
        if self._http is not None:
            await self._http.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._http is not None
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        start, self._next = self._next, self._next + 1
        for k in range(len(self.backends)):
            backend = self.backends[(start + k) % len(self.backends)]
            try:
                async with self._http.request(request.method, backend + request.path_qs, data=body,
                                              headers=headers, timeout=self.upstream_timeout) as response:
                    self.forwarded.append(backend)
                    return web.Response(status=response.status, body=await response.read())
            except (aiohttp.ClientConnectionError, TimeoutError):
                continue  # the request may have reached it: Telegram's update id makes a second delivery harmless
        return web.Response(status=502)


async def balanced(started: list[Replica], within: float = 30.0) -> None:
    """Wait until the replicas hold every chat partition between them, in fair shares (/readyz)."""
    fair, deadline = math.ceil(PARTITIONS / len(started)), time.monotonic() + within
    while True:
        held = [(await r.replica())["partitions"] for r in started]
        if sum(held) == PARTITIONS and max(held) <= fair:
            return
        assert time.monotonic() < deadline, f"partitions never balanced: {held}"
        await asyncio.sleep(0.1)


async def settled(*claims: Claims) -> None:
    """Wait until the replicas' partitions are all held, in fair shares (each sweep balances once a second)."""
    fair = math.ceil(PARTITIONS / len(claims))
    await wait_for(lambda: sum(len(c.partitions) for c in claims) == PARTITIONS
                   and all(len(c.partitions) <= fair for c in claims), within=30)


def chat_owned_by(claims: Claims, platform: str = "recording") -> str:
    """A chat id whose partition this replica owns."""
    return next(f"c{i}" for i in range(10_000) if claims.holds(f"{platform}:c{i}"))
