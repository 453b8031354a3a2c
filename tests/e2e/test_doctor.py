"""`bothub doctor` against the fake LLM and fake platforms: a checklist a person can act on."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from bot.agent.workspace import init_workspace
from bot.app import App
from bot.cli import doctor
from bot.config import ConfigError
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.proxy import FakeProxy
from tests.fakes.telegram_api import BOT_USER, TOKEN, FakeTelegram
from tests.harness import make_config


async def test_all_good_is_a_green_checklist(
    tmp_path: Path, fake: FakeOpenAI, tg: FakeTelegram, capsys: pytest.CaptureFixture[str]
) -> None:
    env = tg.env
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
    assert "! skills/broken.md: [broken] broken (prompt, workspace) — front matter is not valid YAML" in out
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


async def test_a_taken_port_fails_the_checklist_with_both_ways_to_change_it(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """Friction 2: doctor said ✔ and then `make run` died on the port."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        cfg, env = make_config(tmp_path, fake.base_url, {"server": {"port": port}})
        init_workspace(cfg.workspace_dir)
        assert await doctor.run(cfg, env) == 1
    out = capsys.readouterr().out
    assert f"✘ the web server cannot listen on 127.0.0.1:{port} (in use): start with --port N (or set BOTHUB_PORT=N" \
        in out


async def test_doctor_names_the_proxy_and_checks_the_model_and_platform_through_it(
    tmp_path: Path, fake: FakeOpenAI, tg: FakeTelegram, capsys: pytest.CaptureFixture[str]
) -> None:
    """Friction 3: behind a proxy, doctor said only "not reachable (connection)"."""
    proxy = FakeProxy()
    await proxy.start()
    try:
        cfg, env = make_config(tmp_path, fake.base_url, env={
            "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": tg.api_base,
            "HTTP_PROXY": f"http://someone:pw@127.0.0.1:{proxy.port}"})
        init_workspace(cfg.workspace_dir)
        assert await doctor.run(cfg, env) == 0
    finally:
        await proxy.stop()
    out = capsys.readouterr().out
    assert f"· network: outbound connections go through the proxy http://127.0.0.1:{proxy.port} " in out
    assert f"✔ LLM at {fake.base_url} via the proxy http://127.0.0.1:{proxy.port}: reachable in " in out
    assert "✔ telegram: token accepted" in out and "pw" not in out  # the proxy's password is never shown
    assert f"{fake.base_url}/models" in proxy.targets()
    assert any(target.startswith(tg.api_base) and target.endswith("/getMe") for target in proxy.targets())


async def test_doctor_says_the_connections_are_direct_without_a_proxy(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, env = make_config(tmp_path, fake.base_url, {"language": "zh"})
    init_workspace(cfg.workspace_dir)
    await doctor.run(cfg, env)
    out = capsys.readouterr().out
    assert "· 网络：直接连接" in out and "✔ Web 服务器：127.0.0.1:任一空闲端口 空闲" in out
