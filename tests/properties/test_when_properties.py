"""Time expressions: a duration or a moment written in English and in Chinese means the same instant, and a
formatted duration parses back to itself, in any IANA zone and at any moment (DST changes included)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.scheduler.when import parse_every, parse_remind

ZONES = st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Asia/Shanghai", "Australia/Lord_Howe",
                         "Asia/Kathmandu", "America/Sao_Paulo"])
NOW = st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2035, 12, 31), timezones=st.just(UTC))
TEXT = st.sampled_from(["water the plants", "开会", "call Ann"])
COMMON = settings(max_examples=80, deadline=None)


@COMMON
@given(NOW, ZONES, st.integers(0, 48), st.integers(0, 59), st.integers(0, 59), TEXT)
def test_a_duration_in_english_and_chinese_is_the_same_instant(now: datetime, zone: str, h: int, m: int, s: int,
                                                              text: str) -> None:
    if h == m == s == 0:
        s = 1
    tz, expected = ZoneInfo(zone), now + timedelta(hours=h, minutes=m, seconds=s)
    en = "in " + "".join(f"{n}{u}" for n, u in ((h, "h"), (m, "m"), (s, "s")) if n) + f" {text}"
    zh = "".join(f"{n}{u}" for n, u in ((h, "小时"), (m, "分钟"), (s, "秒")) if n) + f"后 {text}"
    assert parse_remind(en, now, tz) == parse_remind(zh, now, tz)
    schedule, rest = parse_remind(en, now, tz)
    assert (schedule.first, rest) == (expected, text)


@COMMON
@given(NOW, ZONES, st.integers(0, 23), st.integers(0, 59), st.sampled_from([("today", "今天"), ("tomorrow", "明天")]),
       TEXT)
def test_a_clock_time_in_english_and_chinese_is_the_same_instant(now: datetime, zone: str, hour: int, minute: int,
                                                                day: tuple[str, str], text: str) -> None:
    tz = ZoneInfo(zone)
    en, zh = f"{day[0]} {hour}:{minute:02d} {text}", f"{day[1]} {hour}点{minute}分 {text}"
    (schedule, rest), other = parse_remind(en, now, tz), parse_remind(zh, now, tz)
    assert (schedule, rest) == other
    local = schedule.first.astimezone(tz)
    wanted = now.astimezone(tz).date() + timedelta(days=day[0] == "tomorrow")
    if local.replace(tzinfo=None) == datetime.combine(wanted, local.time()):  # not a time DST skipped
        assert (local.hour, local.minute) == (hour, minute)


@COMMON
@given(NOW, ZONES, st.integers(1, 48 * 60), TEXT)
def test_an_interval_in_english_and_chinese_is_the_same_schedule(now: datetime, zone: str, minutes: int,
                                                                text: str) -> None:
    tz = ZoneInfo(zone)
    (en, en_rest), (zh, zh_rest) = parse_every(f"{minutes}m {text}", now, tz), parse_every(f"每{minutes}分钟 {text}",
                                                                                        now, tz)
    assert en == zh and en_rest == zh_rest == text
    assert (en.kind, int(en.spec), en.first) == ("interval", minutes * 60, now + timedelta(minutes=minutes))
