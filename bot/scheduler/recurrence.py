"""Next due times and the catch-up rule; pure functions of (job, now), so they are tested without sleeping.

Cron specs are evaluated on the chat's wall clock (croniter on naive local time), then converted to UTC:
"9:00 every day" stays at 9:00 across DST changes. A wall time skipped by spring-forward (02:30 in
Berlin on the last Sunday of March) fires at the same offset after the gap (03:30); a wall time that
happens twice at fall-back fires once, the first time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

MAX_CRON_STEPS = 8  # wall-clock candidates that can map to the past around a fall-back hour


def local_to_utc(wall: datetime, tz: ZoneInfo) -> datetime:
    """A naive wall-clock time in `tz` → aware UTC (fold=0: the earlier of two, the offset before a gap)."""
    return wall.replace(tzinfo=tz, fold=0).astimezone(UTC)


def next_cron(spec: str, tz: ZoneInfo, after: datetime) -> datetime:
    """The first time strictly after `after` (aware) at which the cron spec matches the wall clock in `tz`."""
    from croniter import croniter  # only cron specs need it: imported with the first one

    it = croniter(spec, after.astimezone(tz).replace(tzinfo=None))
    for _ in range(MAX_CRON_STEPS):
        due = local_to_utc(it.get_next(datetime), tz)
        if due > after:
            return due
    raise ValueError(f"cron spec {spec!r} found no time after {after.isoformat()}")


def next_interval(every: timedelta, due: datetime, after: datetime) -> datetime:
    """The next point of the grid `due + k·every` strictly after `after`: missed points are skipped, not burst."""
    if due > after:
        return due
    steps = (after - due) // every + 1
    return due + steps * every


def following(kind: str, spec: str, tz: ZoneInfo, due: datetime, now: datetime) -> datetime | None:
    """When a job that was due at `due` is due next, seen at `now`; None for a one-off."""
    if kind == "cron":
        return next_cron(spec, tz, now)
    if kind == "interval":
        return next_interval(timedelta(seconds=int(spec)), due, now)
    return None


@dataclass(frozen=True, slots=True)
class Advance:
    """What to do with a claimed job: fire it or not, and when it is due next (None: it is finished)."""

    fire: bool
    next_due: datetime | None
    missed: bool = False  # a one-off whose time passed more than catch_up ago: the chat is told instead


def plan(kind: str, spec: str, tz: ZoneInfo, due: datetime, now: datetime, catch_up: float) -> Advance:
    """Due times at most `catch_up` seconds old fire once; older ones are missed (one-off: reported, recurring:
    skipped). Either way a recurring job moves to its next time after now, so a long outage never bursts."""
    fresh = (now - due).total_seconds() <= catch_up
    if kind == "once":
        return Advance(fresh, None, missed=not fresh)
    return Advance(fresh, following(kind, spec, tz, due, now))
