"""Error paths through the real hub: internal errors, 429s while streaming, giving up, session eviction."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import pytest

from bot.adapter import RateLimited
from bot.agent.events import FailureKind
from bot.chats.sessions import SessionKey, Sessions
from bot.delivery.sending import MAX_ATTEMPTS
from bot.i18n import STRINGS
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.harness import RecordingAdapter, running_app


async def test_a_bug_in_a_run_gets_the_internal_error_reply_with_its_id(
        tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        async def broken(*args: object) -> None:  # fault injection: a bug anywhere below the hub
            raise RuntimeError("boom")

        monkeypatch.setattr(app.hub.runner, "answer", broken)
        await rec.say("hello")
        await app.hub.idle()
        monkeypatch.undo()
        await rec.say("and now?")  # the chat is not stuck
        await app.hub.idle()
    sorry, answer = rec.texts()
    error_id = re.fullmatch(r"Sorry, something went wrong on my side\. \(error ([0-9a-f]{8})\)", sorry)
    assert error_id is not None and f"error {error_id.group(1)} in recording chat c1" in caplog.text
    assert answer == "and now?"
    assert 'bothub_errors_total{kind="internal"} 1.0' in app.metrics.render().decode()


async def test_429s_on_the_final_send_are_retried_and_delivered_once(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        fake.script(Text("one piece", chunks=1))
        rec.fail_sends = [RateLimited(0.01), RateLimited(0.01), RateLimited(0.01)]
        await rec.say("hello")
        await app.hub.idle()
    assert rec.texts() == ["one piece"]
    assert rec.attempts["send"] == 4 and len(rec.sent) == 1


async def test_429s_on_stream_edits_are_retried_and_the_answer_completes(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    answer = " ".join(f"w{n}" for n in range(30))
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        fake.script(Text(answer, delay=0.02))
        rec.fail_edits = [RateLimited(0.01)] * 3
        await rec.say("stream please")
        await app.hub.idle()
    assert rec.texts() == [answer]
    assert rec.fail_edits == [] and rec.attempts["edit"] == len(rec.edits) + 3


async def test_delivery_gives_up_after_its_attempts_and_the_hub_goes_on(
        tmp_path: Path, fake: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        fake.script(Text("lost", chunks=1))
        rec.fail_sends = [RateLimited(0.01)] * (MAX_ATTEMPTS + 1)  # the stream's try, then every retry
        with caplog.at_level(logging.ERROR):
            await rec.say("hello")
            await app.hub.idle()
        assert f"giving up delivering to c1 after {MAX_ATTEMPTS} attempts" in caplog.text
        assert rec.sent == []
        await rec.say("again")
        await app.hub.idle()
    assert rec.texts() == ["again"]


async def test_idle_sessions_are_evicted_least_recently_used_first_but_never_a_busy_one() -> None:
    sessions = Sessions(max_idle=2)
    a, b, c, d = (SessionKey("p", name) for name in "abcd")
    release = asyncio.Event()
    sa = sessions.get(a)
    sessions.lane(a).submit(release.wait)  # a is running a job
    sb, sc = sessions.get(b), sessions.get(c)  # over the bound: a is busy, so b (least recent idle) goes
    assert len(sessions) == 2 and sessions.get(a) is sa and sessions.get(c) is sc
    release.set()
    await sessions.lane(a).join()
    sd = sessions.get(d)  # a is idle now and the least recently used
    assert len(sessions) == 2 and sessions.get(c) is sc and sessions.get(d) is sd
    assert sessions.get(b) is not sb and sessions.get(a) is not sa  # both were dropped; they reload lazily


async def test_a_new_session_stays_while_every_other_is_busy_and_the_bound_is_kept_once_they_finish() -> None:
    sessions = Sessions(max_idle=2)
    release = asyncio.Event()
    busy = [SessionKey("p", f"busy{i}") for i in range(20)]  # more running chats than the bound and the scan
    for key in busy:
        sessions.get(key)
        sessions.lane(key).submit(release.wait)
    new = SessionKey("p", "new")
    made = sessions.get(new)
    assert sessions.get(new) is made  # the session just made is kept (it was dropped at once before)
    assert len(sessions) == 21 and all(sessions.busy_at(k.storage_key) for k in busy)  # running ones are kept
    release.set()
    for key in busy:
        await sessions.lane(key).join()
    for i in range(12):  # each new session drops the least recently used idle ones again
        sessions.get(SessionKey("p", f"later{i}"))
    assert len(sessions) == 2


def test_every_run_failure_kind_has_its_reason_in_english_and_chinese() -> None:
    for kind in FailureKind:
        en, zh = STRINGS[kind.reason]
        assert en.strip() and zh.strip(), kind
