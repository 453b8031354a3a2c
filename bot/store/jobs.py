"""Scheduled jobs (reminders, recurring prompts) per chat; the scheduler computes due times.

A due job is claimed in the database, and its next due time stored in the same transaction, so each due
time fires once even with several processes sharing the store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

JobKind = Literal["once", "cron", "interval"]
JOB_KINDS: tuple[JobKind, ...] = ("once", "cron", "interval")


@dataclass(frozen=True, slots=True)
class NewJob:
    chat: str
    conversation_id: str | None  # None: the chat's active conversation when it fires
    created_by: str  # user id
    kind: JobKind
    spec: str  # "2026-12-24 18:00", "0 9 * * 1-5", "30m": as the user gave it
    timezone: str  # IANA name
    next_due: datetime  # aware
    text: str  # the prompt, or the text to post
    runs_agent: bool


@dataclass(frozen=True, slots=True)
class Job:
    id: int
    chat: str
    conversation_id: str | None
    created_by: str
    kind: JobKind
    spec: str
    timezone: str
    next_due: datetime | None  # None: nothing more to run (a one-off that fired)
    text: str
    runs_agent: bool
    enabled: bool
    last_run: datetime | None
    last_result: str | None
    claimed_at: datetime | None  # set while a run is in progress


Reschedule = Callable[[Job], datetime | None]


class JobStore(Protocol):
    async def add(self, job: NewJob) -> Job: ...

    async def for_chat(self, chat: str) -> list[Job]:
        """This chat's jobs, soonest due first."""
        ...

    async def claim_due(self, now: datetime, limit: int, reschedule: Reschedule) -> list[Job]:
        """Claim up to `limit` enabled, unclaimed jobs due at `now` (oldest due first): each is marked
        claimed and gets next_due = reschedule(job) in the same transaction. Returns them as they were
        when due."""
        ...

    async def finish(self, job_id: int, ran_at: datetime, result: str) -> None:
        """Record a claimed job's run and release the claim."""
        ...
