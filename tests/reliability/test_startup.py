"""A platform that cannot be reached at start-up: one clean line, retries with backoff, /readyz not ready."""

from __future__ import annotations

import logging
from pathlib import Path

import aiohttp
import pytest

from bot.adapter import MessageHandler
from bot.config import ConfigError
from bot.ops.startup import Starter
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for


class Flaky(RecordingAdapter):
    """Unreachable for its first `failures` starts, then up."""

    def __init__(self, name: str, failures: int, error: Exception | None = None) -> None:
        super().__init__()
        self.name = name
        self.failures = failures
        self.error = error or ConnectionError(f"cannot reach {name} at http://127.0.0.1:9: Connection refused")
        self.attempts = 0

    async def start(self, on_message: MessageHandler) -> None:
        self.attempts += 1
        if self.attempts <= self.failures:
            raise self.error
        await super().start(on_message)


async def start(adapter: RecordingAdapter) -> None:
    await adapter.start(lambda _msg: _nothing())


async def _nothing() -> None:
    return None


async def test_an_unreachable_platform_is_named_once_and_retried_while_the_others_run(
        caplog: pytest.LogCaptureFixture) -> None:
    down, up = Flaky("down", failures=3), Flaky("up", failures=0)
    starter = Starter(start, first_retry=0.01, max_retry=0.04)
    with caplog.at_level(logging.INFO, logger="bothub.startup"):
        await starter.start_all([down, up])
        assert up.connected() and not down.connected() and starter.retrying == {"down"}
        await wait_for(down.connected, within=5)
    assert down.attempts == 4 and starter.retrying == set()
    lines = [r for r in caplog.records if r.name == "bothub.startup"]
    assert lines[0].getMessage() == ("down: cannot reach down at http://127.0.0.1:9: Connection refused; "
                                     "retrying in 0 s")
    assert all(r.exc_info is None for r in lines)  # no traceback, whatever the level
    assert lines[-1].getMessage() == "down is up"
    await starter.stop()


async def test_refused_credentials_are_not_retried_and_fail_start_up_only_when_nothing_can_run() -> None:
    refused = Flaky("refused", failures=1, error=ConfigError("the token was rejected"))
    starter = Starter(start, first_retry=0.01)
    await starter.start_all([refused, Flaky("fine", failures=0)])
    assert starter.retrying == set() and refused.attempts == 1
    with pytest.raises(ConfigError, match="no platform can run"):
        await Starter(start).start_all([Flaky("refused", failures=1, error=ConfigError("no"))])


async def test_an_unreachable_telegram_leaves_the_hub_running_and_readyz_not_ready(
        tmp_path: Path, fake: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    env = {"TELEGRAM_BOT_TOKEN": "123456:TEST-TOKEN", "TELEGRAM_API_BASE": "http://127.0.0.1:9"}
    config = {"server": {"enabled": True, "port": 0}}
    with caplog.at_level(logging.INFO, logger="bothub.startup"):
        async with running_app(tmp_path, fake.base_url, ("telegram",), config=config, env=env) as app:
            async with aiohttp.ClientSession() as session, \
                    session.get(f"http://127.0.0.1:{app.web_port}/readyz") as resp:
                assert resp.status == 503
                report = await resp.json()
            assert report["adapters"]["telegram"]["connected"] is False
            assert app.starter.retrying == {"telegram"}
    [line] = [r.getMessage() for r in caplog.records if r.name == "bothub.startup" and r.levelno >= logging.ERROR]
    assert line.startswith("telegram: cannot reach the Telegram Bot API at http://127.0.0.1:9")
    assert line.endswith("retrying in 1 s") and "\n" not in line
