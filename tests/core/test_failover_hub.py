"""Failover through the whole app, configured as a deployment would (YAML chains, keys in env): the user gets
one answer from the next link and no failure message; only a whole chain failing says the provider failed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.agent.chains import Chains, provider_configs
from bot.chats.sessions import SessionKey
from bot.config import ConfigError
from bot.ops.redact import secret_values
from tests.fakes.openai_api import API_KEY, Error, FakeOpenAI, Text
from tests.harness import RecordingAdapter, make_config, running_app

CHAT = "recording:c1"
FAILED = "Sorry, the model provider failed"


@pytest_asyncio.fixture
async def backup() -> AsyncIterator[FakeOpenAI]:
    fake = FakeOpenAI(api_key="backup-key")
    await fake.start()
    yield fake
    await fake.stop()


def chained(primary: FakeOpenAI, backup: FakeOpenAI) -> tuple[dict[str, Any], dict[str, str]]:
    config = {"llm": {"providers": {"main": {"base_url": primary.base_url, "api_key_env": "OPENAI_API_KEY"},
                                    "spare": {"base_url": backup.base_url, "api_key_env": "SPARE_API_KEY"}},
                      "chains": {"default": [{"provider": "main", "model": "fake-model"},
                                             {"provider": "spare", "model": "spare-model"}]}}}
    return config, {"SPARE_API_KEY": "backup-key", "OPENAI_API_KEY": API_KEY}


async def test_a_503_is_answered_by_the_next_link_in_one_message(tmp_path: Path, fake: FakeOpenAI,
                                                                 backup: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    fake.script(Error(503))
    backup.script(Text("the spare model answers"))
    config, env = chained(fake, backup)
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config, env=env) as app:
        await rec.say("hello?")
        await app.hub.idle()
        await app.traces.drain()
        assert rec.texts() == ["the spare model answers"]
        path = app.lanes.session(SessionKey("recording", "c1")).path
        trace = await app.store.traces.get(CHAT, path[-1].trace_id or "")
    assert trace is not None and trace.outcome == "ok"
    assert [(s.name, s.outcome) for s in trace.steps] == [("main/fake-model", "error"),
                                                          ("spare/spare-model", "ok")]
    assert backup.requests[0]["headers"]["Authorization"] == "Bearer backup-key"


async def test_only_a_whole_chain_failing_says_the_provider_failed(tmp_path: Path, fake: FakeOpenAI,
                                                                   backup: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    fake.script(Error(503))
    backup.script(Error(500))
    config, env = chained(fake, backup)
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config, env=env) as app:
        await rec.say("hello?")
        await app.hub.idle()
        assert len(rec.texts()) == 1 and rec.texts()[0].startswith(FAILED)
        views = {v.provider: v.state for v in app.llm.health_views()}
        assert views["main"] == views["spare"] == "closed"  # one failure each: below the threshold


@pytest.mark.parametrize(("llm", "message"), [
    ({"providers": {"spare": {"api_key_env": "NOT_SET_API_KEY"}}}, "NOT_SET_API_KEY is not set"),
    ({"chains": {"default": [{"provider": "nowhere", "model": "m"}]}}, "no provider named 'nowhere'"),
    ({"chains": {"default": []}}, "has no links"),
    ({"providers": {"spare": {"api_keys": ["sk-in-yaml"]}}}, "env vars only"),
])
def test_chain_settings_that_cannot_work_are_refused_at_start(tmp_path: Path, llm: dict[str, Any],
                                                              message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        make_config(tmp_path, "http://127.0.0.1:1/v1", {"llm": llm})


def test_without_chains_the_default_chain_is_todays_endpoint(tmp_path: Path) -> None:
    cfg, _ = make_config(tmp_path, "http://127.0.0.1:1/v1")
    (link,) = Chains(cfg.llm).resolve(cfg.llm.chat_model)
    default = provider_configs(cfg.llm)["default"]
    assert (link.provider, link.model, default.base_url, default.api_keys) == (
        "default", "fake-model", "http://127.0.0.1:1/v1", ["test-key"])


def test_provider_keys_named_like_api_keys_are_masked_in_logs() -> None:
    secrets = secret_values({"SPARE_API_KEY": "spare-secret-1", "OPENAI_API_KEY": "main-secret-1", "HOME": "/x"})
    assert secrets == ["main-secret-1", "spare-secret-1"]
