"""Scheduled jobs (reminders, recurring prompts) per chat; the scheduler computes due times.

A due job becomes an inbox entry of its chat (dedupe key: the job and its due time), queued in the same
transaction that stores its next due time: each due time fires once even with several processes sharing
the store, and the run is answered like any message — by the chat's owner, and by the next owner when that
one dies before finishing it. The job stays claimed while its entry waits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from bot.messages import ChatRef

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
    where: ChatRef | None = None  # where runs are delivered (platform, chat, thread, group)
    created_by_name: str = ""
    heartbeat: bool = False  # runs the workspace's HEARTBEAT.md checklist; HEARTBEAT_OK is not sent


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
    claimed_at: datetime | None  # set while a run is queued in the inbox or in progress
    where: ChatRef | None = None
    created_by_name: str = ""
    heartbeat: bool = False


@dataclass(frozen=True, slots=True)
class Due:
    """What the scheduler decided for a job at its due time."""

    next_due: datetime | None  # None: nothing more to run
    event: str | None  # the run, queued as this inbox event; None: this due time is skipped


Plan = Callable[[Job], Due]


@dataclass(frozen=True, slots=True)
class Queued:
    job: Job  # as it was when due: `job.next_due` is the due time being handled
    entry: int | None  # the inbox entry that runs it; None: skipped (or that due time was queued already)


def run_key(job: Job) -> str:
    """The dedupe key of a job's run at its due time."""
    assert job.next_due is not None
    return f"job:{job.id}:{job.next_due.isoformat()}"


class JobStore(Protocol):
    async def add(self, job: NewJob) -> Job: ...

    async def for_chat(self, chat: str) -> list[Job]:
        """This chat's jobs, soonest due first."""
        ...

    async def queue_due(self, now: datetime, limit: int, plan: Plan) -> list[Queued]:
        """Up to `limit` enabled, unclaimed jobs due at `now` (oldest due first), in one transaction: each gets
        its next due time from `plan` and, unless skipped, an inbox entry for its chat (key: `run_key`), which
        keeps it claimed until the entry is finished."""
        ...

    async def finish(self, job_id: int, ran_at: datetime, result: str) -> None:
        """Record a claimed job's run and release the claim."""
        ...

    async def delete(self, chat: str, job_id: int) -> bool: ...

    async def set_enabled(self, chat: str, job_id: int, enabled: bool, next_due: datetime | None = None) -> Job | None:
        """Pause or resume one of this chat's jobs (resuming may move its due time); None if there is none."""
        ...

    async def disable_chat(self, chat: str) -> int:
        """Pause every enabled job of a chat that can no longer be reached; returns how many."""
        ...

    async def next_due(self) -> datetime | None:
        """The soonest due time of any enabled, unclaimed job: the scheduler sleeps until then."""
        ...

    async def release_claims(self) -> int:
        """Release the claims whose inbox entry is gone (finished, or dropped by /stop) while the job's own
        finish was not recorded; returns how many."""
        ...
