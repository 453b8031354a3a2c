"""Hub.handle's one exception: NotKept when the message could not be stored (here the database is locked by
another process past the store's busy timeout), so the adapter does not acknowledge it; the platform's redelivery
is then accepted (the failed write recorded no dedupe key) and answered once."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from bot.adapter import NotKept
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.harness import RecordingAdapter, running_app, wait_for


async def test_a_message_the_store_did_not_take_raises_not_kept_and_its_redelivery_is_answered_once(
        tmp_path: Path, fake: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="bothub.app")
    rec = RecordingAdapter()
    fake.script(Text("answered once"))
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await wait_for(lambda: "old quotas" in caplog.text)  # the start's housekeeping is through
        locker = sqlite3.connect(app.cfg.data_dir / "bothub.sqlite3", isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(NotKept):
                await rec.say("hello", message_id="m-1")
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        await rec.say("hello", message_id="m-1")  # the platform delivers it again
        await rec.say("hello", message_id="m-1")  # and once more: now a duplicate
        await app.hub.idle()
    assert rec.texts() == ["answered once"]
    assert len(fake.requests) == 1
