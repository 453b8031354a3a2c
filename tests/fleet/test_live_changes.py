"""Changed while the hub runs, from the real command line in another process: a new identity is checked with
the platform, stored, and answers within 5 s with its agent; nothing else restarts; disabled, it stops; `bothub
apply` shows its diff and is idempotent; credentials never show again."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.app import App
from bot.fleet.model import Agent
from bot.messages import ChatRef
from tests.cli.test_cli_forgives import bothub, clean_env
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import TOKEN
from tests.fakes.telegram_cloud import TelegramCloud
from tests.fleet.conftest import KEY, SUPPORT_TOKEN, by_model, env_for, workspace
from tests.harness import running_app, wait_for

LIVE = {"fleet": {"poll": 0.5}}


@pytest_asyncio.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, cloud: TelegramCloud) -> AsyncIterator[App]:
    workspace(tmp_path / "data", "helper", "You are Helper. persona-helper\n")
    async with running_app(tmp_path, fake.base_url, ("telegram",), env=env_for(cloud), config=LIVE) as running:
        yield running


def cli_env(tmp_path: Path, cloud: TelegramCloud) -> dict[str, str]:
    return clean_env(BOTHUB_DATA_DIR=str(tmp_path / "data"), BOTHUB_SECRET_KEY=KEY, TELEGRAM_API_BASE=cloud.api_base,
                     SUPPORT_TOKEN=SUPPORT_TOKEN, BAD_TOKEN="999999:NOT-A-BOT")


async def test_an_identity_added_from_the_cli_answers_within_5_s_and_nothing_else_restarts(
        tmp_path: Path, app: App, cloud: TelegramCloud, fake: FakeOpenAI) -> None:
    by_model(fake)
    env = cli_env(tmp_path, cloud)
    default, support = cloud.bots[TOKEN], cloud.bots[SUPPORT_TOKEN]
    started = len(default.calls_of("getMe"))
    code, out, err = await bothub(tmp_path, "identities", "add", "bad", "--platform", "telegram",
                                  "--credential", "TELEGRAM_BOT_TOKEN=BAD_TOKEN", env=env)
    assert code == 1 and "refused" in out and cloud.unknown_tokens == ["getMe"]  # checked, not stored
    code, out, err = await bothub(tmp_path, "agents", "set", "helper", "--workspace", "ws/helper", "--model",
                                  "helper-model", env=env)
    assert code == 0, err
    typed = time.monotonic()
    code, out, err = await bothub(tmp_path, "identities", "add", "support", "--platform", "telegram",
                                  "--credential", "TELEGRAM_BOT_TOKEN=SUPPORT_TOKEN", env=env)
    assert code == 0, err
    await wait_for(lambda: bool(support.calls_of("getUpdates")), within=5)  # polling, without a restart
    print(f"\n`bothub identities add` typed → the new bot polls: {time.monotonic() - typed:.2f} s")
    assert "token accepted, bot @support_bot" in out
    bound = time.monotonic()
    code, out, err = await bothub(tmp_path, "bind", "support", "helper", env=env)
    assert code == 0, err
    chat = ChatRef("telegram", "42", identity="support")
    await wait_for(lambda: (app.roster.for_chat(chat).agent or Agent(name="none")).name == "helper", within=5)
    support.inject_message(42, "hi")
    await wait_for(lambda: support.bot_texts(42) != [], within=5)
    assert support.bot_texts(42) == ["[helper-model] ok"]
    print(f"`bothub bind` typed → first answer with its agent: {time.monotonic() - bound:.2f} s")
    assert time.monotonic() - bound < 5
    assert len(default.calls_of("getMe")) == started  # the default bot was not restarted
    default.inject_message(42, "still there?")
    await wait_for(lambda: default.bot_texts(42) == ["[fake-model] ok"], within=5)
    code, out, _ = await bothub(tmp_path, "identities", "--json", env=env)
    listed = {row["name"]: row for row in json.loads(out)}
    assert listed["support"]["credentials"] == {"TELEGRAM_BOT_TOKEN": "••••OKEN"}  # never shown again
    assert SUPPORT_TOKEN not in out and "bad" not in listed
    code, out, _ = await bothub(tmp_path, "identities", "disable", "support", env=env)
    assert code == 0
    await wait_for(lambda: "support" not in app.bots.running, within=5)
    polls = len(support.calls_of("getUpdates"))
    support.inject_message(42, "anyone?")
    await wait_for(lambda: len(default.bot_texts(42)) == 1, within=1)
    assert support.bot_texts(42) == ["[helper-model] ok"] and len(support.calls_of("getUpdates")) <= polls + 1
    code, out, _ = await bothub(tmp_path, "agents", "history", "--json", env=env)
    history = [(c["action"], c["kind"], c["name"], c["credentials"]) for c in json.loads(out)]
    assert history[0] == ("put", "identity", "support", False) and ("put", "identity", "support", True) in history


async def test_apply_shows_the_diff_first_and_a_second_run_changes_nothing(tmp_path: Path, app: App,
                                                                           cloud: TelegramCloud) -> None:
    env = cli_env(tmp_path, cloud)
    file = tmp_path / "agents.yaml"
    file.write_text("agents:\n  - {name: helper, workspace: ws/helper, model: helper-model}\n"
                    "identities:\n  - name: support\n    platform: telegram\n"
                    "    credentials: {TELEGRAM_BOT_TOKEN: '${SUPPORT_TOKEN}'}\n"
                    "bindings:\n  - {identity: support, agent: helper, kind: dm}\n", encoding="utf-8")
    code, out, _ = await bothub(tmp_path, "apply", str(file), env=env)  # no terminal, no --yes: only the diff
    assert code == 1 and "+ agent helper" in out and "+ binding support/*/*/*/dm" in out
    assert await app.store.fleet.rows() == []
    code, out, err = await bothub(tmp_path, "apply", str(file), "--yes", env=env)
    assert code == 0 and "3 change(s) applied" in out, err
    assert SUPPORT_TOKEN not in out
    code, out, _ = await bothub(tmp_path, "apply", str(file), "--yes", env=env)
    assert code == 0 and "nothing to change" in out
    file.write_text(file.read_text().replace("helper-model", "other-model"), encoding="utf-8")
    code, out, _ = await bothub(tmp_path, "apply", str(file), "--json", env=env)
    assert json.loads(out) == [{"sign": "~", "kind": "agent", "name": "helper",
                                "detail": 'model "helper-model" → "other-model"'}]
    await wait_for(lambda: "support" in app.bots.running, within=5)
