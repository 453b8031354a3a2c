"""The long chaos run (issue 27): three `bothub run` replicas on one PostgreSQL, Telegram through its fake in
webhook mode (behind a round-robin balancer) or long polling, seeded runs that mix SIGKILL, SIGSTOP/SIGCONT, a
dropped database connection and a graceful drain under streamed answers, with reminders falling due during the
faults. Each run counts what was lost, reordered and duplicated per chat and how often each reminder fired, the
time from a kill and from a freeze to the first answer of a chat the victim owned, each replica's CPU per
answered message, and the database's statements (transactions) per answered message.

Faults land at seeded moments, not between two replies, so a kill inside the one window no design closes (the
platform has a reply, its inbox entry is not finished yet) is counted as the duplicate it makes.

`python -m bench.chaos [--runs N]` (default 5).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg

from bench.common import Section, median, ms, percentile, run_standalone
from bot.messages import ChatRef
from bot.store import NewJob
from bot.store.postgres import PostgresStore
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.postgres import PostgresServer
from tests.replicas import cluster

CHATS, PER_CHAT, RATE = 40, 6, 12.0  # 240 messages over 20 s
FIRST_CHAT = 7000
WORDS = " and then a few more words, streamed out one by one"  # each answer streams: a send, edits, a final edit
REMIND_EVERY = 4  # every 4th chat gets a reminder, due in the middle of the faults
FAULTS = ("kill", "freeze", "drop", "drain")
FAST = {"scheduler": {"poll": 0.5}}
_XACTS_SQL = "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"


@dataclass
class Outcome:
    mode: str
    faults: list[str]
    lost: int = 0
    reordered: int = 0  # chats whose answers (duplicates aside) are not in the order asked
    duplicated: int = 0
    reminders_once: bool = True
    failover: dict[str, float] = field(default_factory=dict)  # fault → seconds to the first answer taken over
    cpu_per_message: float = 0.0  # the replicas' CPU together over the messages answered
    cpu_shares: list[float] = field(default_factory=list)  # each replica's share of that CPU
    statements: float = 0.0


def question(chat: int, n: int) -> str:
    return f"q{chat}-{n}{WORDS}"


def _answers(tg: FakeTelegram, chat: int) -> list[str]:
    return [t for t in tg.bot_texts(chat) if t.startswith(f"q{chat}-")]


@contextlib.asynccontextmanager
async def _cluster(tmp: Path, mode: str, llm: FakeOpenAI, tg: FakeTelegram, balancer: cluster.RoundRobin,
                   url: str) -> AsyncIterator[list[cluster.Replica]]:
    names = ("a", "b", "c")
    if mode == "webhook":
        async with cluster.behind_balancer(tmp, names, llm, tg, balancer, url, more=FAST) as started:
            yield started
        return
    env = {"TELEGRAM_BOT_TOKEN": tg.token, "TELEGRAM_API_BASE": tg.api_base}
    async with cluster.replicas(tmp, names, llm, url, env, FAST) as started:
        yield started


async def _owned(victim: cluster.Replica) -> set[int]:
    return {int(s.split(":")[1]) for s in (await victim.replica())["chats"]}


async def _fault(kind: str, victim: cluster.Replica, url: str) -> tuple[float, set[int]]:
    """Apply a fault to `victim` now; returns when and the chats it owned."""
    owned = await _owned(victim)
    victim.cpu_before_fault = victim.cpu_seconds()  # type: ignore[attr-defined]
    at = time.monotonic()
    if kind == "kill":
        victim.kill()
    elif kind == "freeze":
        victim.pause()
    elif kind == "drain":
        victim.proc.terminate()  # SIGTERM: finish what runs, give the chats up, stop
    else:  # the replica's claims connection dropped (a network blip, a server restart of that backend)
        db = await asyncpg.connect(url)
        try:
            await db.execute("SELECT pg_terminate_backend(backend) FROM bothub_replicas WHERE id = $1", victim.name)
        finally:
            await db.close()
    return at, owned


def _cpu(replica: cluster.Replica) -> float:
    """CPU seconds so far; a killed or drained replica's as it was at its fault (its /proc entry is gone)."""
    try:
        return replica.cpu_seconds()
    except FileNotFoundError:
        return float(getattr(replica, "cpu_before_fault", 0.0))


async def one_run(server: PostgresServer, seed: int) -> Outcome:
    rnd = random.Random(seed)
    mode = ("webhook", "polling")[seed % 2]
    faults = rnd.sample(FAULTS, 2)
    llm, tg = FakeOpenAI(words_delay=0.03), FakeTelegram()
    balancer = cluster.RoundRobin([], upstream_timeout=2.0)
    tg.flood = None  # replicas do not share one bot's global budget yet
    sent_at = cluster.timed_sends(tg)
    for fake in (llm, tg, balancer):
        await fake.start()
    url = await server.new_database()
    chats = range(FIRST_CHAT + 100 * seed, FIRST_CHAT + 100 * seed + CHATS)
    reminded = list(chats)[::REMIND_EVERY]
    outcome, store = Outcome(mode, faults), PostgresStore(url)
    db = await asyncpg.connect(url)
    try:
        with tempfile.TemporaryDirectory() as d:
            async with _cluster(Path(d), mode, llm, tg, balancer, url) as replicas:
                await store.open()
                order = cluster.rounds(chats, PER_CHAT)
                due = datetime.now(UTC) + timedelta(seconds=len(order) / RATE / 2)
                for chat in reminded:
                    await store.jobs.add(NewJob(f"telegram:{chat}", None, "u1", "once", "in a while", "UTC", due,
                                                f"pills for {chat}", runs_agent=False,
                                                where=ChatRef("telegram", str(chat)), created_by_name="Li"))
                victims = rnd.sample(replicas, 2)
                at = sorted(rnd.sample(range(len(order) // 4, 3 * len(order) // 4), 2))
                xacts, cpu = await db.fetchval(_XACTS_SQL), [r.cpu_seconds() for r in replicas]
                hit: list[tuple[str, float, set[int]]] = []
                started = time.monotonic()
                for i, (chat, n) in enumerate(order):
                    tg.inject_message(chat, question(chat, n))
                    if i in at:
                        k = at.index(i)
                        hit.append((faults[k], *await _fault(faults[k], victims[k], url)))
                    await asyncio.sleep(max(0.0, started + (i + 1) / RATE - time.monotonic()))
                with contextlib.suppress(AssertionError):  # what is missing is counted below
                    await tg.wait_until(lambda: all(len(_answers(tg, c)) >= PER_CHAT for c in chats), 120)
                for victim in victims:
                    with contextlib.suppress(ProcessLookupError):  # a killed or drained one is gone
                        victim.resume()  # a frozen one wakes: it must write nothing over its successor's work
                with contextlib.suppress(AssertionError):
                    await cluster.inbox_drained(url, within=30)
                await tg.quiet(settle=1.5)
                used = [_cpu(r) - c for r, c in zip(replicas, cpu, strict=True)]
                answered = sum(min(len(_answers(tg, c)), PER_CHAT) for c in chats)
                await asyncio.sleep(1.1)  # the server's statistics are flushed once a second
                outcome.statements = (await db.fetchval(_XACTS_SQL) - xacts) / max(answered, 1)
                outcome.cpu_per_message = sum(used) / max(answered, 1)
                outcome.cpu_shares = [u / max(sum(used), 1e-9) for u in used]
    finally:
        await db.close()
        await store.close()
        for fake in (balancer, tg, llm):
            await fake.stop()
    for chat in chats:
        got, asked = _answers(tg, chat), [question(chat, n) for n in range(PER_CHAT)]
        once = list(dict.fromkeys(got))
        outcome.lost += len(set(asked) - set(got))
        outcome.duplicated += len(got) - len(once)
        outcome.reordered += once != [q for q in asked if q in once]
    outcome.reminders_once = all(sum(f"pills for {c}" in t for t in tg.bot_texts(c)) == 1 for c in reminded)
    for kind, when, owned in hit:
        with contextlib.suppress(ValueError):  # no chat of the victim's was answered after: nothing to time
            if kind in ("kill", "freeze"):
                outcome.failover[kind] = cluster.failover_time(sent_at, when, owned)
    return outcome


async def run(runs: int = 5) -> Section:
    sec = Section("Replicas: the long chaos run (3 replicas, faults, streamed answers, reminders due)")
    server = PostgresServer()
    await asyncio.to_thread(server.start)
    outcomes = []
    try:
        for seed in range(runs):
            outcome = await one_run(server, seed)
            print(f"run {seed}: {outcome}", flush=True)
            outcomes.append(outcome)
    finally:
        await asyncio.to_thread(server.stop)
    total = CHATS * PER_CHAT * runs
    modes = ", ".join(f"{o.mode}: {'+'.join(o.faults)}" for o in outcomes)
    sec.add(f"runs (seeds 0-{runs - 1}), each {CHATS * PER_CHAT} messages from {CHATS} chats", modes)
    sec.check(f"lost, over the {runs} runs ({total} messages)", sum(o.lost for o in outcomes), 0, "", fmt=".0f")
    sec.check(f"chats reordered, over the {runs} runs", sum(o.reordered for o in outcomes), 0, "", fmt=".0f")
    sec.add(f"answers duplicated, over the {runs} runs (the one window: README, Scaling out)",
            str(sum(o.duplicated for o in outcomes)))
    once = sum(o.reminders_once for o in outcomes)
    sec.add("every reminder fired once", f"{once} of {runs} runs", f"{runs} of {runs}", once == runs)
    for kind, limit in (("kill", 3.0), ("freeze", 6.0)):
        times = [o.failover[kind] for o in outcomes if kind in o.failover]
        if times:
            sec.add(f"{kind} → first answer of a chat the victim owned, p99 over {len(times)} run(s)",
                    ms(percentile(times, 99)), f"≤ {limit:g} s", percentile(times, 99) <= limit)
    sec.add(f"CPU per answered message, the 3 replicas together, median of {runs} runs",
            ms(median([o.cpu_per_message for o in outcomes])))
    sec.add("each replica's share of that CPU, per run", "; ".join(
        "/".join(f"{s:.0%}" for s in o.cpu_shares) for o in outcomes))
    statements = [o.statements for o in outcomes]
    sec.check(f"database transactions per answered message, median of {runs} runs", median(statements), 3.5, "")
    sec.notes.append("Webhook runs put the balancer in front of the replicas; polling runs let the `telegram-poller` "
                     "role fetch. Faults: SIGKILL, SIGSTOP (woken after the traffic), the claims connection ended "
                     "by the server (pg_terminate_backend), SIGTERM (a graceful drain); two per run on two replicas "
                     "at seeded moments. Answers stream (the fake model sends a word each 30 ms). Transactions are "
                     "pg_stat_database's commits and rollbacks over the run, the heartbeats, sweeps and the "
                     "scheduler's polls of three replicas included, over the messages answered.")
    return sec


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args, _ = parser.parse_known_args()
    run_standalone(lambda: run(args.runs))
