"""Bounded ownership on a real PostgreSQL (the suite's server: default settings but max_connections=200):
chats are owned by partition, so 50 000 chats across 3 replicas hold 1 024 advisory locks, not 50 000 (one
lock per chat ran the server out of shared memory at ~12 500). Shares are fair, and follow joins and leaves."""

from __future__ import annotations

import math

import asyncpg

from bot.replicas.share import FairShare
from bot.store.claims import PARTITIONS, partition
from bot.store.postgres.claims import PostgresClaims

CHATS = 50_000


async def _replica(url: str, name: str) -> tuple[PostgresClaims, FairShare]:
    claims = PostgresClaims(url, name)
    await claims.start(lambda _entry, _session: None, lambda: None, lambda _partition: None)
    return claims, FairShare(claims)


async def _settle(shares: list[FairShare]) -> None:
    """A few balancing rounds, as each replica's sweep runs one a second."""
    for _ in range(4):
        for share in shares:
            await share.balance(())


def _assert_fair(claims: list[PostgresClaims]) -> None:
    held = [c.partitions for c in claims]
    assert sum(len(h) for h in held) == PARTITIONS and frozenset().union(*held) == set(range(PARTITIONS))
    assert all(len(h) <= math.ceil(PARTITIONS / len(claims)) for h in held), [len(h) for h in held]


async def test_50_000_chats_across_3_replicas_hold_a_bounded_number_of_locks(url: str) -> None:
    replicas = [await _replica(url, name) for name in "abc"]
    claims, shares = [c for c, _ in replicas], [s for _, s in replicas]
    db = await asyncpg.connect(url)
    try:
        await _settle(shares)
        _assert_fair(claims)
        chats = [f"telegram:{100_000 + i}" for i in range(CHATS)]
        owners = [[c.replica for c in claims if c.holds(chat)] for chat in chats]
        assert all(len(o) == 1 for o in owners)  # every chat has exactly one owner
        per_replica = {c.replica: sum(o == [c.replica] for o in owners) for c in claims}
        assert all(CHATS / 3 * 0.85 < n < CHATS / 3 * 1.15 for n in per_replica.values()), per_replica
        for chat in chats[:300]:  # claiming a chat someone owns is refused, and takes no lock
            assert [await c.claim(chat) for c in claims].count(True) == 1
        locks = await db.fetchval("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
        assert locks <= PARTITIONS + 3  # the partitions and the three replicas' presence
        await db.execute("CREATE TABLE still_fine (n int); INSERT INTO still_fine SELECT generate_series(1, 10)")
        assert await db.fetchval("SELECT sum(n) FROM still_fine") == 55
    finally:
        await db.close()
        for c in claims:
            await c.stop()


async def test_shares_follow_replicas_joining_and_leaving(url: str) -> None:
    a = await _replica(url, "a")
    b = c = None
    try:
        await _settle([a[1]])
        assert len(a[0].partitions) == PARTITIONS  # alone: everything
        b = await _replica(url, "b")
        await _settle([a[1], b[1]])
        _assert_fair([a[0], b[0]])
        busy = set(list(a[0].partitions)[:600])  # work in progress is never handed back
        c = await _replica(url, "c")
        for _ in range(4):
            await a[1].balance(busy)
            await b[1].balance(())
            await c[1].balance(())
        assert busy <= a[0].partitions and len(c[0].partitions) > 0
        await _settle([a[1], b[1], c[1]])
        _assert_fair([a[0], b[0], c[0]])
        await b[0].stop()  # b leaves (or dies: the server frees its locks with its connection)
        await _settle([a[1], c[1]])
        _assert_fair([a[0], c[0]])
    finally:
        for replica in (a, b, c):
            if replica is not None:
                await replica[0].stop()


async def test_a_partition_asked_for_is_handed_over_once_idle_and_left_alone(url: str) -> None:
    (a, share_a), (b, share_b) = await _replica(url, "a"), await _replica(url, "b")
    try:
        await _settle([share_a, share_b])
        chat = next(f"web:{i}" for i in range(100) if a.holds(f"web:{i}"))
        share_a.asked(partition(chat))
        await share_a.balance({partition(chat)})  # busy: kept
        assert a.holds(chat)
        await share_a.balance(())
        assert not a.holds(chat) and partition(chat) not in a.partitions
        await share_a.balance(())  # below its share now, but it leaves the asked-for partition alone
        assert not a.holds(chat)
        assert await b.claim(chat) is True
    finally:
        await a.stop()
        await b.stop()
