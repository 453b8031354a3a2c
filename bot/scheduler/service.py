"""Creating, listing, pausing and cancelling a chat's jobs: shared by the chat commands and the agent tool."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.config import SchedulerConfig
from bot.messages import ChatRef
from bot.scheduler.clock import Clock
from bot.scheduler.recurrence import following
from bot.scheduler.when import Schedule
from bot.store import Job, NewJob, Store

HEARTBEAT_OK = "HEARTBEAT_OK"  # a heartbeat answer of exactly this is not sent
HEARTBEAT_FILE = "HEARTBEAT.md"
JobAction = Literal["post", "agent", "heartbeat"]  # post the text / answer it as a prompt / run the checklist


@dataclass(frozen=True, slots=True)
class Owner:
    """Who creates a job, in which chat and conversation."""

    chat: str  # storage key
    where: ChatRef
    conversation_id: str | None
    user_id: str
    user_name: str


class TooManyJobs(Exception):
    pass


def zone(name: str) -> ZoneInfo:
    """An IANA zone by name (`Europe/Berlin`, `UTC`); ValueError for anything else, including paths."""
    if not name or name.startswith(("/", ".")) or ".." in name:
        raise ValueError(name)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as e:
        raise ValueError(name) from e


class Schedules:
    def __init__(self, store: Store, cfg: SchedulerConfig, heartbeat_every: float, clock: Clock,
                 on_change: Callable[[], None]) -> None:
        self.store = store
        self.cfg = cfg
        self.heartbeat_every = int(heartbeat_every)  # seconds
        self.clock = clock
        self.on_change = on_change  # wakes the scheduler: a new job may be due sooner than it planned

    def now(self) -> datetime:
        return self.clock.now()

    async def timezone(self, chat: str) -> ZoneInfo:
        name = (await self.store.settings.get(chat)).timezone
        try:
            return zone(name or self.cfg.timezone)
        except ValueError:
            return zone("UTC")

    async def set_timezone(self, chat: str, name: str) -> ZoneInfo:
        tz = zone(name.strip())
        await self.store.settings.update(chat, timezone=tz.key)
        return tz

    async def create(self, owner: Owner, schedule: Schedule, text: str, action: JobAction, tz: ZoneInfo) -> Job:
        if len(await self.jobs(owner.chat)) >= self.cfg.max_jobs_per_chat:
            raise TooManyJobs
        where = ChatRef(owner.where.platform, owner.where.chat_id, owner.where.thread_id, owner.where.is_group,
                        identity=owner.where.identity)
        job = await self.store.jobs.add(NewJob(
            owner.chat, owner.conversation_id, owner.user_id, schedule.kind, schedule.spec, tz.key, schedule.first,
            text, runs_agent=action != "post", where=where, created_by_name=owner.user_name,
            heartbeat=action == "heartbeat"))
        self.on_change()
        return job

    async def jobs(self, chat: str) -> list[Job]:
        """This chat's jobs that will still run (active or paused), soonest first."""
        return [job for job in await self.store.jobs.for_chat(chat) if job.next_due is not None]

    async def cancel(self, chat: str, job_id: str) -> bool:
        number = _number(job_id)
        return number is not None and await self.store.jobs.delete(chat, number)

    async def pause(self, chat: str, job_id: str) -> Job | None:
        number = _number(job_id)
        return None if number is None else await self.store.jobs.set_enabled(chat, number, False)

    async def resume(self, chat: str, job_id: str) -> Job | None:
        """A resumed job is due at its next time from now; a one-off whose time passed while paused fires now."""
        number = _number(job_id)
        job = next((j for j in await self.jobs(chat) if j.id == number), None)
        if job is None or job.enabled or job.next_due is None:
            return None
        now, due = self.now(), job.next_due
        if due <= now:
            due = following(job.kind, job.spec, zone(job.timezone), due, now) or now
        resumed = await self.store.jobs.set_enabled(chat, job.id, True, due)
        self.on_change()
        return resumed


def _number(job_id: str) -> int | None:
    text = job_id.strip().lstrip("#")
    return int(text) if text.isdecimal() and len(text) < 19 else None


def local_time(when: datetime, tz: ZoneInfo) -> str:
    """`2026-03-29 09:00 CEST`: what a chat is shown for a due time."""
    return when.astimezone(tz).strftime("%Y-%m-%d %H:%M %Z")


def describe_every(kind: str, spec: str) -> str:
    """`30m`, `1h30m`, or the cron spec: how /jobs names a recurrence."""
    if kind != "interval":
        return spec
    seconds, out = int(spec), ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            out += f"{seconds // size}{unit}"
            seconds %= size
    return out
