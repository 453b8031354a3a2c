"""Jobs: per-chat listing, claiming due jobs once with the next due time stored in the same step."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.store import Job, NewJob, Store
from bot.store.jobs import JobKind

T0 = datetime(2026, 12, 24, 9, 0, tzinfo=UTC)


def _new(chat: str, due: datetime, kind: JobKind = "once", text: str = "call Li") -> NewJob:
    return NewJob(chat, None, "u1", kind, "spec", "Europe/Berlin", due, text, runs_agent=False)


def _never(job: Job) -> datetime | None:
    return None


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


async def test_claim_takes_due_jobs_once_and_reschedules(store: Store) -> None:
    once = await store.jobs.add(_new("tg:1", T0))
    every = await store.jobs.add(_new("tg:2", T0 - timedelta(minutes=1), "interval"))
    future = await store.jobs.add(_new("tg:1", T0 + timedelta(seconds=1)))
    claimed = await store.jobs.claim_due(T0, 10, lambda j: T0 + timedelta(minutes=30) if j.kind == "interval" else None)
    assert [j.id for j in claimed] == [every.id, once.id]  # oldest due first
    assert [j.next_due for j in claimed] == [T0 - timedelta(minutes=1), T0]  # as they were when due
    later = await store.jobs.claim_due(T0 + timedelta(hours=1), 10, _never)
    assert [j.id for j in later] == [future.id]  # the claimed ones are skipped
    [stored] = await store.jobs.for_chat("tg:2")
    assert stored.claimed_at == T0 and stored.next_due == T0 + timedelta(minutes=30)
    await store.jobs.finish(every.id, T0 + timedelta(seconds=5), "sent")
    [stored] = await store.jobs.for_chat("tg:2")
    assert (stored.claimed_at, stored.last_run, stored.last_result) == (None, T0 + timedelta(seconds=5), "sent")
    again = await store.jobs.claim_due(T0 + timedelta(minutes=30), 10, _never)
    assert [j.id for j in again] == [every.id]
    assert await store.jobs.claim_due(T0 + timedelta(days=1), 10, _never) == []


async def test_concurrent_claims_take_each_due_job_exactly_once(store: Store) -> None:
    for i in range(50):
        await store.jobs.add(_new(f"tg:{i % 5}", T0 + timedelta(seconds=i)))
    batches = await asyncio.gather(*(store.jobs.claim_due(T0 + timedelta(minutes=1), 7, _never) for _ in range(10)))
    ids = [j.id for batch in batches for j in batch]
    assert len(ids) == 50 and len(set(ids)) == 50
    assert all(len(batch) <= 7 for batch in batches)
