"""`bothub doctor` against the fake LLM and fake platforms: a checklist a person can act on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.agent.workspace import init_workspace
from bot.app import App
from bot.cli import doctor
from bot.config import ConfigError
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import BOT_USER, TOKEN, FakeTelegram
from tests.harness import make_config


@pytest_asyncio.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    server = FakeTelegram()
    await server.start()
    yield server
    await server.stop()


async def test_all_good_is_a_green_checklist(
    tmp_path: Path, fake: FakeOpenAI, tg: FakeTelegram, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": tg.api_base}
    cfg, full_env = make_config(tmp_path, fake.base_url, env=env)
    cfg.llm.chat_model = "fake-model"
    init_workspace(cfg.workspace_dir)
    assert await doctor.run(cfg, full_env) == 0
    out = capsys.readouterr().out
    assert "✔ workspace" in out
    assert "✔ LLM at" in out and "fake-model" in out
    assert "✔ telegram: token accepted" in out
    assert "group privacy is on" in out  # the fake's bot has BotFather's default: groups need it off


async def test_a_bot_that_reads_group_messages_gets_no_privacy_note(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    server = FakeTelegram(bot_user={**BOT_USER, "can_read_all_group_messages": True})
    await server.start()
    try:
        cfg, env = make_config(tmp_path, fake.base_url, env={"TELEGRAM_BOT_TOKEN": TOKEN,
                                                             "TELEGRAM_API_BASE": server.api_base})
        init_workspace(cfg.workspace_dir)
        await doctor.run(cfg, env)
    finally:
        await server.stop()
    out = capsys.readouterr().out
    assert "✔ telegram: token accepted, bot @hub_test_bot\n" in out


async def test_problems_are_named(
    tmp_path: Path, fake: FakeOpenAI, tg: FakeTelegram, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"TELEGRAM_BOT_TOKEN": "123456:WRONG-TOKEN", "TELEGRAM_API_BASE": tg.api_base}
    cfg, full_env = make_config(tmp_path, fake.base_url, env=env)
    cfg.llm.chat_model = "no-such-model"
    assert await doctor.run(cfg, full_env) == 1
    out = capsys.readouterr().out
    assert "· workspace" in out and "does not exist yet" in out  # created on first start: not a failure
    assert "model 'no-such-model' not offered" in out
    assert "✘ telegram: Telegram rejected TELEGRAM_BOT_TOKEN" in out


async def test_doctor_and_chat_agree_on_the_workspace(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, env = make_config(tmp_path, fake.base_url)
    cfg.llm.chat_model = "fake-model"
    init_workspace(cfg.workspace_dir)
    (cfg.workspace_dir / "SOUL.md").unlink()  # missing: start-up restores it, so doctor does not fail
    (cfg.workspace_dir / "skills" / "broken.md").write_text("---\nname: [oops\n---\nx\n", encoding="utf-8")
    assert await doctor.run(cfg, env) == 0
    out = capsys.readouterr().out
    assert "· SOUL.md is missing: start-up restores the default" in out
    assert "! skills/broken.md: [broken] broken (prompt) — front matter is not valid YAML" in out
    App(cfg, env)  # starts, and brings SOUL.md back
    assert (cfg.workspace_dir / "SOUL.md").read_text(encoding="utf-8").strip()

    (cfg.workspace_dir / "SOUL.md").write_text("\n", encoding="utf-8")  # empty: both refuse, in the same words
    assert await doctor.run(cfg, env) == 1
    assert "✘ workspace: SOUL.md is empty; it is required" in capsys.readouterr().out
    with pytest.raises(ConfigError, match=r"SOUL\.md is empty; it is required"):
        App(cfg, env)


async def test_doctor_speaks_the_configured_language(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, env = make_config(tmp_path, fake.base_url, {"language": "zh"})
    cfg.llm.chat_model = "fake-model"
    init_workspace(cfg.workspace_dir)
    assert await doctor.run(cfg, env) == 0
    out = capsys.readouterr().out
    assert f"✔ 工作区 {cfg.workspace_dir}" in out
    assert "毫秒），模型 fake-model" in out and "未配置任何平台" in out


async def test_each_provider_of_a_chain_gets_its_own_line(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    llm = {"providers": {"main": {"base_url": fake.base_url, "api_key_env": "OPENAI_API_KEY"},
                         "down": {"base_url": "http://127.0.0.1:9/v1"}},
           "chains": {"default": [{"provider": "main", "model": "fake-model"},
                                  {"provider": "down", "model": "other-model"}]}}
    cfg, env = make_config(tmp_path, fake.base_url, {"llm": llm})
    init_workspace(cfg.workspace_dir)
    assert await doctor.run(cfg, env) == 1
    out = capsys.readouterr().out
    assert f"✔ LLM at main ({fake.base_url}): reachable in " in out and " ms, model fake-model" in out
    assert "✘ LLM at down (http://127.0.0.1:9/v1): not reachable (connection)" in out
