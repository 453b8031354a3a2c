"""Claims on a real PostgreSQL: one owner per chat partition, roles, the sweep, and what a dead replica leaves."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from bot.replicas.ownership import ChatOwnership
from bot.store.claims import partition
from bot.store.inbox import InboxEntry
from bot.store.postgres import PostgresStore
from bot.store.postgres.claims import PostgresClaims
from tests.harness import entry_id, wait_for


async def _claims(url: str, replica: str, woken: list[tuple[int, str]] | None = None,
                  lost: Callable[[], None] = lambda: None) -> PostgresClaims:
    claims = PostgresClaims(url, replica)
    await claims.start(lambda entry, session: (woken if woken is not None else []).append((entry, session)), lost,
                       lambda _partition: None)
    return claims


async def test_a_chat_has_one_owner_until_its_partition_is_released(url: str) -> None:
    one, two = "telegram:1", "telegram:2"
    assert partition(one) != partition(two)
    a, b = await _claims(url, "a"), await _claims(url, "b")
    try:
        assert await a.claim(one) is True
        assert await a.claim(one) is True  # already ours: no second lock
        assert await b.claim(one) is False
        assert await b.claim(two) is True
        assert (a.partitions, b.partitions) == ({partition(one)}, {partition(two)})
        assert a.holds(one) and not b.holds(one) and b.holds(two)
        await a.release([partition(one), partition(two)])  # only its own is released
        assert await b.claim(one) is True
        assert await a.claim(two) is False
        assert await a.replicas() == 2
    finally:
        await a.stop()
        await b.stop()


async def test_two_replicas_with_one_id_are_refused(url: str) -> None:
    a = await _claims(url, "same")
    try:
        with pytest.raises(RuntimeError, match="another replica is connected with the id 'same'"):
            await _claims(url, "same")
    finally:
        await a.stop()


async def test_accepted_entries_wake_every_replica_and_the_sweep_claims_unowned_chats(url: str) -> None:
    woken: list[tuple[int, str]] = []
    a, b = await _claims(url, "a", woken), await _claims(url, "b")
    store = PostgresStore(url)
    await store.open()
    try:
        first = entry_id(await store.inbox.accept("telegram:7:1", "telegram:7", "{}"))
        second = entry_id(await store.inbox.accept("discord:9:1", "discord:9", "{}"))
        await wait_for(lambda: len(woken) == 2)
        assert woken == [(first, "telegram:7"), (second, "discord:9")]
        assert partition("telegram:7") != partition("discord:9")
        assert await b.claim("telegram:7") is True
        assert await a.sweep(["telegram", "discord"]) == []  # fresh entries are left to whoever accepted them
        await asyncio.sleep(1.1)
        assert await a.sweep(["telegram", "discord"]) == ["discord:9"]  # telegram:7 is b's
        assert await a.sweep(["telegram", "discord"]) == ["discord:9"]  # its own now, with an entry waiting
        assert a.partitions == {partition("discord:9")}
        await b.stop()  # b's connection ends: its chats are free
        assert await a.sweep(["telegram"]) == ["telegram:7"]
        assert [e.id for e in await store.inbox.waiting("telegram:7")] == [first]
    finally:
        await a.stop()
        await b.stop()
        await store.close()


async def test_roles_are_exclusive_and_a_killed_connection_frees_them(url: str) -> None:
    lost: list[str] = []
    a = await _claims(url, "a", lost=lambda: lost.append("a"))
    b = await _claims(url, "b")
    try:
        assert await a.lead("poller:0") is True
        assert await b.lead("poller:0") is False
        await a.claim("telegram:1")
        conn = a._conn
        assert conn is not None
        conn.terminate()  # what a SIGKILL does to the server's view of this replica
        await wait_for(lambda: lost == ["a"], within=10)
        assert a.roles == frozenset() and a.partitions == frozenset()
        assert await b.lead("poller:0") is True
        assert await b.claim("telegram:1") is True
        await wait_for(lambda: a._conn is not None, within=10)  # a reconnects, holding nothing
        assert await a.lead("poller:0") is False
        await b.resign("poller:0")
        assert await a.lead("poller:0") is True
    finally:
        await a.stop()
        await b.stop()


async def test_the_claims_connection_keeps_the_server_told_about_dead_peers(url: str) -> None:
    a = await _claims(url, "a")
    try:
        assert await a.replicas() == 1
        b = await _claims(url, "b")
        assert await a.replicas() == 2
        await b.stop()
        await asyncio.sleep(0)
        assert await a.replicas() == 1
    finally:
        await a.stop()


async def test_claims_of_one_chat_at_once_take_its_lock_once(url: str) -> None:
    a, b = await _claims(url, "a"), await _claims(url, "b")
    try:
        assert await asyncio.gather(*(a.claim("telegram:3") for _ in range(3))) == [True, True, True]
        await a.release([partition("telegram:3")])  # one release frees it: the lock was not taken three times
        assert await b.claim("telegram:3") is True
    finally:
        await a.stop()
        await b.stop()


async def test_entries_left_by_a_dead_owner_go_before_a_new_arrival(url: str) -> None:
    """The sweep claims every orphaned chat at once and routes them one by one: a message arriving meanwhile
    for a chat further down must not overtake that chat's older entries."""
    store = PostgresStore(url)
    await store.open()
    b = await _claims(url, "b")
    routed: list[tuple[str, int]] = []
    first_route = asyncio.Event()
    release_first = asyncio.Event()

    async def route(entry: InboxEntry) -> None:
        routed.append((entry.session, entry.id))
        if len(routed) == 1:
            first_route.set()
            await release_first.wait()  # the sweep is held inside the first chat's pull

    owners = ChatOwnership(b, store.inbox, route, busy=lambda _s: False, forget=lambda _s: None,
                           abandon=_nothing, platforms=lambda: ["telegram"],
                           reorders=lambda _platform: False)
    try:
        old = {s: [entry_id(await store.inbox.accept(f"{s}:{n}", s, "{}")) for n in range(2)]
               for s in ("telegram:1", "telegram:2")}
        await asyncio.sleep(1.1)  # older than a second: the sweep's to take
        sweep = asyncio.create_task(owners.sweep())
        await asyncio.wait_for(first_route.wait(), 10)
        other = next(s for s in old if s != routed[0][0])
        new = entry_id(await store.inbox.accept(f"{other}:new", other, "{}"))

        async def route_here() -> None:
            routed.append((other, new))

        arrival = asyncio.create_task(owners.arrived(other, new, route_here))
        release_first.set()
        await asyncio.gather(sweep, arrival)
        assert [e for s, e in routed if s == other] == [*old[other], new]
        assert sorted(routed) == sorted([(s, e) for s, ids in old.items() for e in ids] + [(other, new)])
    finally:
        await b.stop()
        await store.close()


async def _nothing() -> None:
    return None
