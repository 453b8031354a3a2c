"""Two `bothub run` replicas on one PostgreSQL behind a round-robin load balancer, Telegram in webhook mode:
a steady stream of messages over 200 chats, one replica SIGKILLed in the middle. Every message is answered
exactly once, in order per chat, and the survivor takes the dead replica's chats over.

The kill lands where no reply of the killed replica is between the platform accepting it and its inbox
entry being finished: that window (milliseconds) cannot be closed against an API without idempotency keys,
and a kill inside it answers that message twice (README, "Scaling out"). The test pauses the replica,
checks it is outside the window, and kills it then (or lets it run a moment and tries again).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.postgres import PostgresServer
from tests.replicas.cluster import (
    RoundRobin,
    behind_balancer,
    failover_time,
    question,
    send_with_a_kill,
    timed_sends,
)

CHATS = 200
PER_CHAT = 5  # 1 000 messages
RATE = 20.0  # messages per second, steady: within the bot's 30 a second, which the replicas share
FIRST_CHAT = 5000


@pytest.mark.timeout(300)  # two `bothub run` processes and PostgreSQL on a loaded 2-core machine
async def test_a_replica_killed_mid_traffic_loses_nothing_and_answers_nothing_twice(
        tmp_path: Path, postgres: PostgresServer) -> None:
    llm, tg, balancer = FakeOpenAI(), FakeTelegram(), RoundRobin([])
    tg.flood = None  # the budget judge still checks the limits; a 429 after the failover would only slow it
    sent_at = timed_sends(tg)
    for server in (llm, tg, balancer):
        await server.start()
    url = await postgres.new_database()
    chats = range(FIRST_CHAT, FIRST_CHAT + CHATS)
    try:
        async with behind_balancer(tmp_path, ("a", "b"), llm, tg, balancer, url) as (a, b):
            killed_at, orphaned = await send_with_a_kill(tg, chats, PER_CHAT, RATE, a, url)
            with contextlib.suppress(AssertionError):  # what is missing is reported below, chat by chat
                await tg.wait_until(lambda: sum(len(tg.bot_texts(c)) for c in chats) >= CHATS * PER_CHAT, 150)
                await tg.quiet()
            survivor = await b.replica()
    finally:
        for server in (balancer, tg, llm):
            await server.stop()
    wrong = {c: tg.bot_texts(c) for c in chats if tg.bot_texts(c) != [question(c, n) for n in range(PER_CHAT)]}
    assert not wrong, f"{len(wrong)} chats answered wrongly, e.g. {list(wrong.items())[:5]}"
    assert orphaned, "the killed replica owned no chat: nothing was taken over"
    failover = failover_time(sent_at, killed_at, orphaned)
    print(f"\nkill → first answer by the survivor in a chat the killed replica owned: {failover * 1000:.0f} ms")
    assert failover < 10.0  # measured 1-5 s on a loaded 2-core machine; reported above
    assert survivor["id"] == "b" and orphaned & {int(s.split(":")[1]) for s in survivor["chats"]}
