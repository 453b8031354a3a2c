"""Jobs: per-chat listing, queueing each due run once in the inbox with the next due time stored in the same step."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from bot.messages import ChatRef
from bot.scheduler.runner import Claim, Scheduler
from bot.store import Job, NewJob, Store
from bot.store.jobs import Due, JobKind, Queued
from tests.store.conftest import StoreFactory

T0 = datetime(2026, 12, 24, 9, 0, tzinfo=UTC)


def _new(chat: str, due: datetime, kind: JobKind = "once", text: str = "call Li") -> NewJob:
    return NewJob(chat, None, "u1", kind, "spec", "Europe/Berlin", due, text, runs_agent=False)


def _never(job: Job) -> Due:
    return Due(None, '{"run": 1}')


def _ids(queued: list[Queued]) -> list[int]:
    return [q.job.id for q in queued]


async def test_add_and_list_per_chat(store: Store) -> None:
    later = await store.jobs.add(_new("tg:1", T0 + timedelta(hours=1), "interval", "water plants"))
    sooner = await store.jobs.add(_new("tg:1", T0))
    await store.jobs.add(_new("tg:2", T0))
    assert (sooner.chat, sooner.kind, sooner.timezone, sooner.next_due, sooner.text, sooner.runs_agent) == (
        "tg:1", "once", "Europe/Berlin", T0, "call Li", False)
    assert sooner.enabled and sooner.last_run is None and sooner.last_result is None and sooner.claimed_at is None
    assert [j.id for j in await store.jobs.for_chat("tg:1")] == [sooner.id, later.id]
    assert [j.chat for j in await store.jobs.for_chat("tg:2")] == ["tg:2"]
    assert await store.jobs.for_chat("tg:3") == []


async def test_due_runs_are_queued_once_in_the_inbox_and_rescheduled(store: Store) -> None:
    once = await store.jobs.add(_new("tg:1", T0))
    every = await store.jobs.add(_new("tg:2", T0 - timedelta(minutes=1), "interval"))
    future = await store.jobs.add(_new("tg:1", T0 + timedelta(seconds=1)))
    queued = await store.jobs.queue_due(T0, 10, lambda j: Due(T0 + timedelta(minutes=30) if j.kind == "interval"
                                                              else None, f"run {j.id}"))
    assert _ids(queued) == [every.id, once.id]  # oldest due first
    assert [q.job.next_due for q in queued] == [T0 - timedelta(minutes=1), T0]  # as they were when due
    [entry] = await store.inbox.waiting("tg:2")
    assert (entry.id, entry.job, entry.event) == (queued[0].entry, every.id, f"run {every.id}")
    assert [e.job for e in await store.inbox.waiting("tg:1")] == [once.id]
    later = await store.jobs.queue_due(T0 + timedelta(hours=1), 10, _never)
    assert _ids(later) == [future.id]  # the claimed ones are skipped
    [stored] = await store.jobs.for_chat("tg:2")
    assert stored.claimed_at == T0 and stored.next_due == T0 + timedelta(minutes=30)
    await store.jobs.finish(every.id, T0 + timedelta(seconds=5), "sent")
    [stored] = await store.jobs.for_chat("tg:2")
    assert (stored.claimed_at, stored.last_run, stored.last_result) == (None, T0 + timedelta(seconds=5), "sent")
    again = await store.jobs.queue_due(T0 + timedelta(minutes=30), 10, _never)
    assert _ids(again) == [every.id]
    assert await store.jobs.queue_due(T0 + timedelta(days=1), 10, _never) == []


async def test_a_skipped_or_already_queued_due_time_queues_nothing(store: Store) -> None:
    job = await store.jobs.add(_new("tg:1", T0, "interval"))
    [skipped] = await store.jobs.queue_due(T0, 10, lambda j: Due(T0 + timedelta(minutes=30), None))
    [stored] = await store.jobs.for_chat("tg:1")
    assert (skipped.entry, stored.claimed_at, stored.next_due) == (None, None, T0 + timedelta(minutes=30))
    [first] = await store.jobs.queue_due(T0 + timedelta(minutes=30), 10, lambda j: Due(j.next_due, "run"))
    await store.inbox.finish("tg:1", [first.entry or 0])
    await store.jobs.finish(job.id, T0, "sent")  # still due at the time that ran (as a resume can leave it)
    [again] = await store.jobs.queue_due(T0 + timedelta(minutes=30), 10, lambda j: Due(None, "run"))
    [stored] = await store.jobs.for_chat("tg:1")
    assert (again.entry, stored.claimed_at) == (None, None)  # keyed by job and due time: fired once
    assert await store.inbox.waiting("tg:1") == []


async def test_concurrent_queueing_takes_each_due_job_exactly_once(store: Store) -> None:
    for i in range(50):
        await store.jobs.add(_new(f"tg:{i % 5}", T0 + timedelta(seconds=i)))
    batches = await asyncio.gather(*(store.jobs.queue_due(T0 + timedelta(minutes=1), 7, _never) for _ in range(10)))
    ids = [q.job.id for batch in batches for q in batch]
    assert len(ids) == 50 and len(set(ids)) == 50
    assert all(len(batch) <= 7 for batch in batches)
    assert len(await store.inbox.unfinished()) == 50


def _at(chat: str, due: datetime, where: ChatRef | None = None, kind: JobKind = "once") -> NewJob:
    return NewJob(chat, "conv1", "u1", kind, "1800" if kind == "interval" else "", "UTC", due, "water plants",
                  runs_agent=True, where=where, created_by_name="Li", heartbeat=True)


async def test_delivery_address_creator_and_heartbeat_round_trip(store: Store) -> None:
    where = ChatRef("telegram", "-100", "7", is_group=True)
    job = await store.jobs.add(_at("telegram:-100#7", T0, where))
    [stored] = await store.jobs.for_chat("telegram:-100#7")
    assert stored == job
    assert (stored.where, stored.created_by_name, stored.heartbeat, stored.conversation_id) == (where, "Li", True,
                                                                                                 "conv1")
    plain = await store.jobs.add(_new("tg:1", T0))
    assert (plain.where, plain.created_by_name, plain.heartbeat) == (None, "", False)


async def test_pause_resume_delete_are_scoped_by_chat(store: Store) -> None:
    job = await store.jobs.add(_at("tg:1", T0))
    assert await store.jobs.set_enabled("tg:2", job.id, False) is None  # another chat's id is "not found"
    assert not await store.jobs.delete("tg:2", job.id)
    paused = await store.jobs.set_enabled("tg:1", job.id, False)
    assert paused is not None and not paused.enabled and paused.next_due == T0
    assert await store.jobs.queue_due(T0 + timedelta(hours=1), 10, _never) == []  # paused jobs are not claimed
    assert await store.jobs.next_due() is None
    resumed = await store.jobs.set_enabled("tg:1", job.id, True, T0 + timedelta(hours=2))
    assert resumed is not None and resumed.enabled and resumed.next_due == T0 + timedelta(hours=2)
    assert await store.jobs.next_due() == T0 + timedelta(hours=2)
    assert await store.jobs.delete("tg:1", job.id)
    assert await store.jobs.for_chat("tg:1") == []


async def test_a_gone_chat_has_all_its_jobs_disabled(store: Store) -> None:
    for _ in range(3):
        await store.jobs.add(_at("tg:gone", T0))
    other = await store.jobs.add(_at("tg:here", T0))
    assert await store.jobs.disable_chat("tg:gone") == 3
    assert [j.enabled for j in await store.jobs.for_chat("tg:gone")] == [False, False, False]
    assert _ids(await store.jobs.queue_due(T0, 10, _never)) == [other.id]


async def test_a_claim_lasts_as_long_as_its_inbox_entry(store: Store) -> None:
    job = await store.jobs.add(_at("tg:1", T0, kind="interval"))
    [queued] = await store.jobs.queue_due(T0, 10, lambda j: Due(T0 + timedelta(minutes=30), "run"))
    assert await store.jobs.next_due() is None  # claimed: not due for anyone while its run waits or goes on
    assert await store.jobs.release_claims() == 0  # its entry waits (a replica died: the next owner runs it)
    assert await store.jobs.queue_due(T0 + timedelta(minutes=30), 10, _never) == []
    await store.inbox.finish("tg:1", [queued.entry or 0])  # answered (or dropped by /stop), its result never recorded
    assert await store.jobs.release_claims() == 1
    assert _ids(await store.jobs.queue_due(T0 + timedelta(minutes=30), 10, _never)) == [job.id]


async def test_two_schedulers_on_one_database_fire_each_of_1000_due_jobs_once(new_store: StoreFactory) -> None:
    """Two stores (two connections or pools, as two replicas have) share one database."""
    stores = [new_store(), new_store()]
    for s in stores:
        await s.open()
    try:
        for i in range(1000):
            await stores[0].jobs.add(_at(f"tg:{i % 20}", T0 - timedelta(seconds=i), kind=("once", "interval")[i % 2]))
        fired: list[int] = []

        def dispatcher(s: Store) -> Callable[[Claim], Awaitable[None]]:
            async def dispatch(claim: Claim) -> None:
                fired.append(claim.job.id)
                await s.jobs.finish(claim.job.id, T0, "ok")

            return dispatch

        schedulers = [Scheduler(s.jobs, _Fixed(T0), dispatcher(s), catch_up=3600, batch=25) for s in stores]
        counts = await asyncio.gather(*(s.tick() for s in schedulers))
        assert sum(counts) == 1000 and len(fired) == 1000 and len(set(fired)) == 1000
        assert await asyncio.gather(*(s.tick() for s in schedulers)) == [0, 0]
    finally:
        for s in stores:
            await s.close()


class _Fixed:
    def __init__(self, now: datetime) -> None:
        self._now = now

    def now(self) -> datetime:
        return self._now

    async def sleep(self, seconds: float) -> None:
        raise AssertionError("never sleeps")
