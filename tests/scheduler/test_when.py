"""The /remind and /every time forms, en and zh, as a table; DST days in Europe/Berlin and America/New_York."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.scheduler.when import TimeFormError, parse_every, parse_remind

BERLIN, NEW_YORK, SHANGHAI = "Europe/Berlin", "America/New_York", "Asia/Shanghai"
# Saturdays before a DST change: Berlin springs forward 2026-03-29 and falls back 2026-10-25,
# New York springs forward 2026-03-08 and falls back 2026-11-01.
SPRING_BERLIN = "2026-03-28T12:00:00+00:00"  # 13:00 CET
FALL_BERLIN = "2026-10-24T12:00:00+00:00"  # 14:00 CEST
SPRING_NY = "2026-03-07T17:00:00+00:00"  # 12:00 EST
FALL_NY = "2026-10-31T16:00:00+00:00"  # 12:00 EDT

REMIND = [
    # (arguments, zone, now, due as local time with offset, rest)
    ("in 30s hi", BERLIN, SPRING_BERLIN, "2026-03-28T13:00:30+01:00", "hi"),
    ("in 10m tea", BERLIN, SPRING_BERLIN, "2026-03-28T13:10:00+01:00", "tea"),
    ("in 2h call Li", BERLIN, SPRING_BERLIN, "2026-03-28T15:00:00+01:00", "call Li"),
    ("in 1h30m stretch", BERLIN, SPRING_BERLIN, "2026-03-28T14:30:00+01:00", "stretch"),
    ("in 90 minutes stretch", BERLIN, SPRING_BERLIN, "2026-03-28T14:30:00+01:00", "stretch"),
    ("in 2 hours call", BERLIN, SPRING_BERLIN, "2026-03-28T15:00:00+01:00", "call"),
    ("in 1d water plants", BERLIN, SPRING_BERLIN, "2026-03-29T14:00:00+02:00", "water plants"),  # 24 real hours
    ("tomorrow 9:00 standup", BERLIN, SPRING_BERLIN, "2026-03-29T09:00:00+02:00", "standup"),
    ("Tomorrow 9:00 Caps", BERLIN, SPRING_BERLIN, "2026-03-29T09:00:00+02:00", "Caps"),
    ("tomorrow 2:30 in the gap", BERLIN, SPRING_BERLIN, "2026-03-29T03:30:00+02:00", "in the gap"),
    ("today 18:30 gym", BERLIN, SPRING_BERLIN, "2026-03-28T18:30:00+01:00", "gym"),
    ("18:00 dinner", BERLIN, SPRING_BERLIN, "2026-03-28T18:00:00+01:00", "dinner"),
    ("12:00 lunch (already past today)", BERLIN, SPRING_BERLIN, "2026-03-29T12:00:00+02:00",
     "lunch (already past today)"),
    ("at 7pm go home", BERLIN, SPRING_BERLIN, "2026-03-28T19:00:00+01:00", "go home"),
    ("at 9am coffee", BERLIN, SPRING_BERLIN, "2026-03-29T09:00:00+02:00", "coffee"),
    ("2026-12-24 18:00 xmas", BERLIN, SPRING_BERLIN, "2026-12-24T18:00:00+01:00", "xmas"),
    ("2026-07-01 08:15 summer", BERLIN, SPRING_BERLIN, "2026-07-01T08:15:00+02:00", "summer"),
    ("明天 9点 开会", BERLIN, SPRING_BERLIN, "2026-03-29T09:00:00+02:00", "开会"),
    ("明天9点开会", BERLIN, SPRING_BERLIN, "2026-03-29T09:00:00+02:00", "开会"),
    ("明天 9点30分 交报告", BERLIN, SPRING_BERLIN, "2026-03-29T09:30:00+02:00", "交报告"),
    ("明天上午10点半 交报告", BERLIN, SPRING_BERLIN, "2026-03-29T10:30:00+02:00", "交报告"),
    ("明天下午3点 喝茶", BERLIN, SPRING_BERLIN, "2026-03-29T15:00:00+02:00", "喝茶"),
    ("今天晚上8点 吃饭", BERLIN, SPRING_BERLIN, "2026-03-28T20:00:00+01:00", "吃饭"),
    ("后天 9:30 体检", BERLIN, SPRING_BERLIN, "2026-03-30T09:30:00+02:00", "体检"),
    ("30分钟后 喝水", BERLIN, SPRING_BERLIN, "2026-03-28T13:30:00+01:00", "喝水"),
    ("2小时后，开会", BERLIN, SPRING_BERLIN, "2026-03-28T15:00:00+01:00", "开会"),
    ("半小时后 出门", BERLIN, SPRING_BERLIN, "2026-03-28T13:30:00+01:00", "出门"),
    ("10秒后 测试", BERLIN, SPRING_BERLIN, "2026-03-28T13:00:10+01:00", "测试"),
    ("3天后 还书", BERLIN, SPRING_BERLIN, "2026-03-31T14:00:00+02:00", "还书"),  # 72 real hours
    ("晚上8点 打电话", BERLIN, SPRING_BERLIN, "2026-03-28T20:00:00+01:00", "打电话"),
    ("中午12点 吃饭", BERLIN, SPRING_BERLIN, "2026-03-29T12:00:00+02:00", "吃饭"),
    ("tomorrow 2:30 twice", BERLIN, FALL_BERLIN, "2026-10-25T02:30:00+02:00", "twice"),  # the first 02:30
    ("tomorrow 9:00 x", BERLIN, FALL_BERLIN, "2026-10-25T09:00:00+01:00", "x"),
    ("in 1d x", BERLIN, FALL_BERLIN, "2026-10-25T13:00:00+01:00", "x"),
    ("tomorrow 9:00 x", NEW_YORK, SPRING_NY, "2026-03-08T09:00:00-04:00", "x"),
    ("tomorrow 2:30 gap", NEW_YORK, SPRING_NY, "2026-03-08T03:30:00-04:00", "gap"),
    ("in 1d x", NEW_YORK, SPRING_NY, "2026-03-08T13:00:00-04:00", "x"),
    ("明天 9点 x", NEW_YORK, SPRING_NY, "2026-03-08T09:00:00-04:00", "x"),
    ("tomorrow 1:30 twice", NEW_YORK, FALL_NY, "2026-11-01T01:30:00-04:00", "twice"),
    ("in 1d x", NEW_YORK, FALL_NY, "2026-11-01T11:00:00-05:00", "x"),
    ("明天 9点 x", SHANGHAI, SPRING_BERLIN, "2026-03-29T09:00:00+08:00", "x"),
]

EVERY = [
    # (arguments, zone, now, kind, spec, first run as local time with offset, rest)
    ("day 9:00 report", BERLIN, SPRING_BERLIN, "cron", "0 9 * * *", "2026-03-29T09:00:00+02:00", "report"),
    ("daily 18:30 x", BERLIN, SPRING_BERLIN, "cron", "30 18 * * *", "2026-03-28T18:30:00+01:00", "x"),
    ("weekday 9:00 x", BERLIN, SPRING_BERLIN, "cron", "0 9 * * 1-5", "2026-03-30T09:00:00+02:00", "x"),
    ("monday 10:00 x", BERLIN, SPRING_BERLIN, "cron", "0 10 * * 1", "2026-03-30T10:00:00+02:00", "x"),
    ("sun 8:00 x", BERLIN, SPRING_BERLIN, "cron", "0 8 * * 0", "2026-03-29T08:00:00+02:00", "x"),
    ("30m drink", BERLIN, SPRING_BERLIN, "interval", "1800", "2026-03-28T13:30:00+01:00", "drink"),
    ("2h x", BERLIN, SPRING_BERLIN, "interval", "7200", "2026-03-28T15:00:00+01:00", "x"),
    ("1h30m x", BERLIN, SPRING_BERLIN, "interval", "5400", "2026-03-28T14:30:00+01:00", "x"),
    ("0 9 * * 1-5 standup", BERLIN, SPRING_BERLIN, "cron", "0 9 * * 1-5", "2026-03-30T09:00:00+02:00", "standup"),
    ("*/15 * * * * tick", BERLIN, SPRING_BERLIN, "cron", "*/15 * * * *", "2026-03-28T13:15:00+01:00", "tick"),
    ("每天 9点 日报", BERLIN, SPRING_BERLIN, "cron", "0 9 * * *", "2026-03-29T09:00:00+02:00", "日报"),
    ("每天早上8点半 x", BERLIN, SPRING_BERLIN, "cron", "30 8 * * *", "2026-03-29T08:30:00+02:00", "x"),
    ("工作日 9点 站会", BERLIN, SPRING_BERLIN, "cron", "0 9 * * 1-5", "2026-03-30T09:00:00+02:00", "站会"),
    ("每周一 10点 周会", BERLIN, SPRING_BERLIN, "cron", "0 10 * * 1", "2026-03-30T10:00:00+02:00", "周会"),
    ("周五下午5点 周报", BERLIN, SPRING_BERLIN, "cron", "0 17 * * 5", "2026-04-03T17:00:00+02:00", "周报"),
    ("每30分钟 喝水", BERLIN, SPRING_BERLIN, "interval", "1800", "2026-03-28T13:30:00+01:00", "喝水"),
    ("每2小时 x", BERLIN, SPRING_BERLIN, "interval", "7200", "2026-03-28T15:00:00+01:00", "x"),
    ("每半小时 x", BERLIN, SPRING_BERLIN, "interval", "1800", "2026-03-28T13:30:00+01:00", "x"),
    ("每天2:30 gap", BERLIN, SPRING_BERLIN, "cron", "30 2 * * *", "2026-03-29T03:30:00+02:00", "gap"),
    ("day 2:30 gap", NEW_YORK, SPRING_NY, "cron", "30 2 * * *", "2026-03-08T03:30:00-04:00", "gap"),
    ("day 1:30 twice", NEW_YORK, FALL_NY, "cron", "30 1 * * *", "2026-11-01T01:30:00-04:00", "twice"),
]


@pytest.mark.parametrize(("args", "zone", "now", "due", "rest"), REMIND)
def test_remind_forms(args: str, zone: str, now: str, due: str, rest: str) -> None:
    tz = ZoneInfo(zone)
    schedule, text = parse_remind(args, datetime.fromisoformat(now), tz)
    assert (schedule.kind, schedule.first.astimezone(tz).isoformat(), text) == ("once", due, rest)


@pytest.mark.parametrize(("args", "zone", "now", "kind", "spec", "first", "rest"), EVERY)
def test_every_forms(args: str, zone: str, now: str, kind: str, spec: str, first: str, rest: str) -> None:
    tz = ZoneInfo(zone)
    schedule, text = parse_every(args, datetime.fromisoformat(now), tz)
    assert (schedule.kind, schedule.spec, schedule.first.astimezone(tz).isoformat(), text) == (kind, spec, first, rest)


@pytest.mark.parametrize("args", ["", "tomorrow", "in 10m", "tomorrow 9:00", "next week call", "soon call",
                                  "2026-02-30 10:00 bad date", "25:00 too late", "明天 开会", "明天 9点",
                                  "in 0s nothing", "at 13pm x", "call mom tomorrow"])
def test_remind_refuses_what_it_does_not_know(args: str) -> None:
    with pytest.raises(TimeFormError):
        parse_remind(args, datetime.fromisoformat(SPRING_BERLIN), ZoneInfo(BERLIN))


@pytest.mark.parametrize("args", ["", "30s too often", "every day x", "61 * * * * bad cron", "day x", "30m",
                                  "30分钟 no 每", "weekday", "0 9 * * *"])
def test_every_refuses_what_it_does_not_know(args: str) -> None:
    with pytest.raises(TimeFormError):
        parse_every(args, datetime.fromisoformat(SPRING_BERLIN), ZoneInfo(BERLIN))


def test_a_time_alone_is_accepted_where_the_text_comes_separately() -> None:
    """The `schedule` tool passes the time and the text apart."""
    now, tz = datetime.fromisoformat(SPRING_BERLIN), ZoneInfo(BERLIN)
    schedule, rest = parse_remind("tomorrow 9:00", now, tz, text=False)
    assert (schedule.first.astimezone(tz).isoformat(), rest) == ("2026-03-29T09:00:00+02:00", "")
    assert parse_every("weekday 9:00", now, tz, text=False)[0].spec == "0 9 * * 1-5"
