"""`bothub doctor` checks DingTalk's credentials against the fake: a green line, or the refusal named."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.agent.workspace import init_workspace
from bot.cli import doctor
from tests.fakes.dingtalk_api import CLIENT_ID, CLIENT_SECRET, FakeDingTalk
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import make_config


async def checklist(tmp_path: Path, fake: FakeOpenAI, dingtalk: FakeDingTalk, secret: str) -> int:
    env = {"DINGTALK_CLIENT_ID": CLIENT_ID, "DINGTALK_CLIENT_SECRET": secret, "DINGTALK_API_BASE": dingtalk.base}
    cfg, full_env = make_config(tmp_path, fake.base_url, env=env)
    cfg.llm.chat_model = "fake-model"
    init_workspace(cfg.workspace_dir)
    return await doctor.run(cfg, full_env)


async def test_good_credentials_are_a_green_line(tmp_path: Path, fake: FakeOpenAI, dingtalk: FakeDingTalk,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code = await checklist(tmp_path, fake, dingtalk, CLIENT_SECRET)
    out = capsys.readouterr().out
    assert code == 0 and f"✔ dingtalk: app {CLIENT_ID} accepted" in out
    assert CLIENT_SECRET not in out


async def test_a_wrong_secret_is_named(tmp_path: Path, fake: FakeOpenAI, dingtalk: FakeDingTalk,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code = await checklist(tmp_path, fake, dingtalk, "not-the-secret")
    out = capsys.readouterr().out
    assert code == 1 and "✘ dingtalk: DingTalk refused the app" in out and "not-the-secret" not in out
