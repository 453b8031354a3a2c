"""The time forms `/remind` and `/every` accept (en and zh), parsed into a `Schedule`; nothing is guessed.

`/remind`: `in 30s`, `in 1h30m`, `tomorrow 9:00`, `today 18:30`, `18:00`, `2026-12-24 18:00`,
`30分钟后`, `明天 9点`, `后天下午3点半`. `/every`: `day 9:00`, `weekday 9:00`, `monday 10:00`, `30m`,
a five-field cron expression, `每天 9点`, `工作日 9点`, `每周一 10点`, `每30分钟`.
Wall-clock times are read in the chat's time zone; relative times are real elapsed time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from bot.scheduler.recurrence import local_to_utc, next_cron

Kind = Literal["once", "cron", "interval"]
MIN_INTERVAL = 60  # seconds: a recurring job more often than this is a flood, not a schedule

_UNITS = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "m": 60, "min": 60, "mins": 60, "minute": 60,
          "minutes": 60, "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600, "d": 86400,
          "day": 86400, "days": 86400, "秒": 1, "秒钟": 1, "分": 60, "分钟": 60, "小时": 3600, "个小时": 3600,
          "钟头": 3600, "个钟头": 3600, "天": 86400}
_DURATION = re.compile(r"(\d+)\s*([a-z]+|秒钟|秒|分钟|分|个小时|小时|个钟头|钟头|天)", re.I)
_DAYS_EN = {"today": 0, "tomorrow": 1}
_DAYS_ZH = {"今天": 0, "今日": 0, "明天": 1, "明日": 1, "后天": 2}
_WEEKDAYS = {"monday": 1, "mon": 1, "tuesday": 2, "tue": 2, "wednesday": 3, "wed": 3, "thursday": 4, "thu": 4,
             "friday": 5, "fri": 5, "saturday": 6, "sat": 6, "sunday": 0, "sun": 0}
_ZH_WEEKDAYS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 0, "天": 0}
_CLOCK_EN = re.compile(r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$", re.I)
_PERIOD = r"(上午|早上|早晨|中午|下午|晚上|傍晚|凌晨)?"
_CLOCK_ZH = re.compile(_PERIOD + r"\s*(\d{1,2})(?::(\d{2})|点(?:(\d{1,2})分?|(半))?)")
_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_CRON_FIELD = re.compile(r"^[\d*/,\-]+$")


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a job fires: `first` (UTC); then `spec` again for cron (5 fields) and interval (seconds)."""

    kind: Kind
    spec: str
    first: datetime


class TimeFormError(ValueError):
    """The text does not start with a time form we know; the caller shows usage help."""


def parse_remind(args: str, now: datetime, tz: ZoneInfo, *, text: bool = True) -> tuple[Schedule, str]:
    """`/remind` arguments → (one-off schedule, the reminder text); `text=False` accepts a time alone."""
    args = args.strip()
    due, rest = _relative(args, now) or _zh_moment(args, now, tz) or _en_moment(args, now, tz) or (None, "")
    if due is None or bool(rest) != text:
        raise TimeFormError(args)
    return Schedule("once", due.isoformat(), due), rest


def parse_every(args: str, now: datetime, tz: ZoneInfo, *, text: bool = True) -> tuple[Schedule, str]:
    """`/every` arguments → (recurring schedule, the prompt); `text=False` accepts a schedule alone."""
    args = args.strip()
    found = _every_interval(args) or _every_cron(args) or _every_calendar(args)
    if found is None:
        raise TimeFormError(args)
    kind, spec, rest = found
    if bool(rest) != text:
        raise TimeFormError(args)
    if kind == "interval":
        return Schedule(kind, spec, now + timedelta(seconds=int(spec))), rest
    return Schedule(kind, spec, next_cron(spec, tz, now)), rest


def _duration(text: str) -> tuple[int, str] | None:
    """Leading `1h30m`, `90 minutes`, `2小时` → (seconds, rest)."""
    total, pos = 0, 0
    while match := _DURATION.match(text, pos):
        unit = _UNITS.get(match.group(2).lower())
        if unit is None:
            break
        total, pos = total + int(match.group(1)) * unit, match.end()
        pos += len(text[pos:]) - len(text[pos:].lstrip())
    return (total, text[pos:]) if total else None


def _relative(args: str, now: datetime) -> tuple[datetime, str] | None:
    if args.lower().startswith("in "):
        found = _duration(args[3:].lstrip())
        return (now + timedelta(seconds=found[0]), found[1].strip()) if found else None
    if args.startswith("半小时后"):
        return now + timedelta(minutes=30), args[4:].strip()
    found = _duration(args)
    if found and found[1].startswith(("后", "以后", "之后")):
        rest = found[1].removeprefix("以").removeprefix("之").removeprefix("后")
        return now + timedelta(seconds=found[0]), rest.lstrip("，, ").strip()
    return None


def _en_moment(args: str, now: datetime, tz: ZoneInfo) -> tuple[datetime, str] | None:
    words = args.split(None, 2)
    if not words:
        return None
    first = words[0].lower()
    if (clock := _clock_en(words[0])) and ":" in words[0]:  # `18:00 text`: the next 18:00
        return _next_clock(clock, now, tz, " ".join(words[1:]))
    if len(words) < 2 or (clock := _clock_en(words[1])) is None:
        return None
    rest = words[2] if len(words) == 3 else ""
    if first == "at":
        return _next_clock(clock, now, tz, rest)
    if first in _DAYS_EN:
        day = now.astimezone(tz).date() + timedelta(days=_DAYS_EN[first])
        return local_to_utc(datetime.combine(day, clock), tz), rest
    if match := _DATE.fullmatch(words[0]):
        try:
            day = date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return None
        return local_to_utc(datetime.combine(day, clock), tz), rest
    return None


def _next_clock(clock: time, now: datetime, tz: ZoneInfo, rest: str) -> tuple[datetime, str]:
    """A bare time of day: today if still ahead, else tomorrow."""
    day = now.astimezone(tz).date()
    due = local_to_utc(datetime.combine(day, clock), tz)
    if due <= now:
        due = local_to_utc(datetime.combine(day + timedelta(days=1), clock), tz)
    return due, rest


def _clock_en(word: str) -> time | None:
    match = _CLOCK_EN.fullmatch(word.strip())
    if match is None or (match[2] is None and match[3] is None):
        return None
    hour, minute = int(match[1]), int(match[2] or 0)
    if match[3]:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if match[3].lower() == "pm" else 0)
    return time(hour, minute) if hour < 24 and minute < 60 else None


def _clock_zh(text: str) -> tuple[time, str] | None:
    """`9点`, `9点30分`, `下午3点半`, `18:00` at the start of text → (time, rest)."""
    match = _CLOCK_ZH.match(text)
    if match is None:
        return None
    period, hour = match[1], int(match[2])
    minute = int(match[3] or match[4] or 0) + (30 if match[5] else 0)
    if (period in ("下午", "晚上", "傍晚") and hour < 12) or (period == "中午" and hour < 11):
        hour += 12
    if hour >= 24 or minute >= 60:
        return None
    return time(hour, minute), text[match.end():].lstrip("，, ").strip()


def _zh_moment(args: str, now: datetime, tz: ZoneInfo) -> tuple[datetime, str] | None:
    offset = next((days for word, days in _DAYS_ZH.items() if args.startswith(word)), None)
    if offset is None:
        found = _clock_zh(args)
        return _next_clock(found[0], now, tz, found[1]) if found else None
    found = _clock_zh(args[2:].lstrip())
    if found is None:
        return None
    day = now.astimezone(tz).date() + timedelta(days=offset)
    return local_to_utc(datetime.combine(day, found[0]), tz), found[1]


def _every_interval(args: str) -> tuple[Kind, str, str] | None:
    text = args.removeprefix("每").removeprefix("隔")
    if text.startswith("半小时"):
        seconds, rest = 1800, text[3:]
    elif found := _duration(text):
        seconds, rest = found
    else:
        return None
    if text is args and not re.match(r"\d+\s*[a-z]", args, re.I):
        return None  # a bare zh duration needs 每: `30分钟 …` alone is not a schedule
    if seconds < MIN_INTERVAL:
        raise TimeFormError(args)
    return "interval", str(seconds), rest.lstrip("，, ").strip()


def _every_cron(args: str) -> tuple[Kind, str, str] | None:
    words = args.split(None, 5)
    if len(words) < 5 or not all(_CRON_FIELD.match(w) for w in words[:5]):
        return None
    spec = " ".join(words[:5])
    from croniter import croniter  # only cron specs need it: imported with the first one

    if not croniter.is_valid(spec):
        raise TimeFormError(args)
    return "cron", spec, words[5] if len(words) == 6 else ""


def _every_calendar(args: str) -> tuple[Kind, str, str] | None:
    """`day 9:00`, `weekday 9:00`, `monday 10:00`, `每天 9点`, `工作日 9点`, `每周一 10点` → a cron spec."""
    words = args.split(None, 2)
    head = words[0].lower() if words else ""
    days = {"day": "*", "daily": "*", "weekday": "1-5", "weekdays": "1-5"}.get(head)
    if days is None and head in _WEEKDAYS:
        days = str(_WEEKDAYS[head])
    if days is not None and len(words) >= 2 and (clock := _clock_en(words[1])):
        return "cron", f"{clock.minute} {clock.hour} * * {days}", words[2] if len(words) == 3 else ""
    zh = re.match(r"(每天|每日|工作日|每个工作日|(?:每)?(?:周|星期|礼拜)([一二三四五六日天]))\s*", args)
    if zh is None:
        return None
    days = "*" if zh[1] in ("每天", "每日") else "1-5" if zh[2] is None else str(_ZH_WEEKDAYS[zh[2]])
    found = _clock_zh(args[zh.end():])
    if found is None:
        return None
    return "cron", f"{found[0].minute} {found[0].hour} * * {days}", found[1]
