"""/healthz, /readyz and /metrics on the hub's server, and the watchdog that restarts a dead adapter."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp

from bot.adapter import MessageHandler
from bot.app import App
from bot.ops.metrics import Metrics
from bot.ops.watchdog import Watchdog
from tests.fakes.openai_api import Error, FakeOpenAI
from tests.harness import RecordingAdapter, make_config, running_app, wait_for

SERVER = {"server": {"enabled": True, "port": 0}}


class FlakyAdapter(RecordingAdapter):
    """Loses its connection on demand; a (re)start brings it back unless told to fail."""

    def __init__(self, name: str = "flaky") -> None:
        super().__init__()
        self.name = name
        self.up = False
        self.starts = 0
        self.stops = 0
        self.failing_starts = 0

    async def start(self, on_message: MessageHandler) -> None:
        self.starts += 1
        if self.failing_starts:
            self.failing_starts -= 1
            raise ConnectionError("platform unreachable")
        await super().start(on_message)
        self.up = True

    async def stop(self) -> None:
        self.stops += 1
        self.up = False

    def connected(self) -> bool:
        return self.up


async def get(app: App, path: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{app.web_port}{path}") as resp:
        body = await (resp.json() if resp.content_type == "application/json" else resp.text())
        return resp.status, body


async def test_health_readiness_and_metrics(tmp_path: Path, fake: FakeOpenAI) -> None:
    flaky = FlakyAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(flaky,), config=SERVER) as app:
        assert await get(app, "/healthz") == (200, {"status": "ok"})
        status, ready = await get(app, "/readyz")
        assert status == 200 and ready["adapters"]["flaky"]["last_event"] is None
        await flaky.say("hello")
        fake.script(Error(401, message="bad key"))
        await flaky.say("again")
        await app.hub.idle()
        status, ready = await get(app, "/readyz")
        assert status == 200 and ready["adapters"]["flaky"]["seconds_since_last_event"] >= 0
        flaky.up = False
        status, ready = await get(app, "/readyz")
        assert status == 503 and ready == {"ready": False, "adapters": {"flaky": {
            "connected": False, "last_event": ready["adapters"]["flaky"]["last_event"],
            "seconds_since_last_event": ready["adapters"]["flaky"]["seconds_since_last_event"]}}}
        status, text = await get(app, "/metrics")
    assert status == 200
    for line in ('bothub_messages_in_total{platform="flaky"} 2.0',
                 'bothub_messages_out_total{platform="flaky"} 2.0',
                 'bothub_runs_total{outcome="ok"} 1.0',
                 'bothub_runs_total{outcome="failed"} 1.0',
                 'bothub_errors_total{kind="auth"} 1.0',
                 "bothub_run_duration_seconds_count 2.0",
                 "bothub_llm_first_token_seconds_count 1.0",
                 'bothub_llm_provider_state{provider="default"} 0.0',  # one failure: the breaker stays closed
                 'bothub_llm_provider_requests_total{provider="default"} 2.0',
                 'bothub_llm_provider_failures_total{provider="default"} 1.0',
                 "bothub_llm_cost 0.0"):  # no price table
        assert line in text, line
    prompt_tokens = next(line for line in text.splitlines() if line.startswith('bothub_llm_tokens{kind="prompt"}'))
    assert float(prompt_tokens.split()[-1]) > 0  # the fake reports usage with each answer


async def test_two_apps_keep_separate_metrics(tmp_path: Path, fake: FakeOpenAI) -> None:
    a, b = RecordingAdapter(), RecordingAdapter()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with running_app(tmp_path / "a", fake.base_url, adapters=(a,)) as app_a, \
            running_app(tmp_path / "b", fake.base_url, adapters=(b,)) as app_b:
        await a.say("only in a")
        await app_a.hub.idle()
    assert 'bothub_messages_in_total{platform="recording"} 1.0' in app_a.metrics.render().decode()
    assert "bothub_messages_in_total{" not in app_b.metrics.render().decode()


async def test_watchdog_restarts_an_adapter_that_stays_down(tmp_path: Path, fake: FakeOpenAI) -> None:
    (tmp_path / "x").mkdir()
    cfg, env = make_config(tmp_path / "x", fake.base_url)
    flaky = FlakyAdapter()
    app = App(cfg, env, adapters=(flaky,))
    app.watchdog.check_every, app.watchdog.down_grace, app.watchdog.first_backoff = 0.02, 0.1, 0.1
    await app.start()
    try:
        flaky.up = False
        await wait_for(lambda: flaky.starts == 2 and flaky.up, within=5)
        await flaky.say("still answered after the restart")
        await app.hub.idle()
    finally:
        await app.stop()
    assert flaky.stops >= 2  # the watchdog's stop before the restart, then the app's own
    assert flaky.texts() == ["still answered after the restart"]
    assert 'bothub_adapter_restarts_total{platform="flaky"} 1.0' in app.metrics.render().decode()


async def test_watchdog_backs_off_while_restarts_fail() -> None:
    now = [0.0]
    flaky = FlakyAdapter()
    flaky.failing_starts = 100
    restarts: list[float] = []

    async def start(adapter: Any) -> None:
        restarts.append(now[0])
        await adapter.start(lambda msg: asyncio.sleep(0))

    dog = Watchdog([flaky], start, Metrics(), down_grace=30, first_backoff=5, max_backoff=20, clock=lambda: now[0])
    while now[0] <= 120:
        await dog.check()
        now[0] += 1
    assert restarts == [30, 35, 45, 65, 85, 105]  # after the grace period: 5, 10, 20, then capped at 20
    flaky.failing_starts = 0
    now[0] = 125  # the next attempt is due 20 s after the last one
    await dog.check()
    assert flaky.up and restarts[-1] == 125
