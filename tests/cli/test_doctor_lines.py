"""`bothub doctor`'s lines for set-ups the other tests never make, in process: no model configured at all, the web
server and the dashboard off, a platform that has no credential check, and a model behind a proxy the client
cannot use; any of the failures makes the exit code 1."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.cli import doctor
from bot.config import Config, load_config
from bot.i18n import t


def config(tmp_path: Path, raw: dict[str, object], env: dict[str, str]) -> tuple[Config, dict[str, str]]:
    path = tmp_path / "bothub.yaml"
    path.write_text(yaml.safe_dump({"data_dir": str(tmp_path / "data"), **raw}), encoding="utf-8")
    return load_config(path, env), env


async def test_nothing_configured_and_everything_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg, env = config(tmp_path, {"server": {"enabled": False, "dashboard": False}, "web": {"enabled": True}}, {})
    assert await doctor.run(cfg, env) == 1
    lines = capsys.readouterr().out.splitlines()
    for expected in (f"{doctor.FAIL} {t('en', 'doctor_llm_missing')}", f"{doctor.INFO} {t('en', 'doctor_server_off')}",
                     f"{doctor.INFO} {t('en', 'doctor_dashboard_off')}",
                     f"{doctor.INFO} {t('en', 'doctor_platform_unchecked', name='web')}"):
        assert expected in lines, expected


async def test_a_model_behind_a_proxy_the_client_cannot_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {"OPENAI_BASE_URL": "https://models.example/v1", "OPENAI_API_KEY": "k", "HTTPS_PROXY": "socks5://p:1080"}
    cfg, env = config(tmp_path, {"server": {"port": 0}}, env)
    assert await doctor.run(cfg, env) == 1
    failed = [line for line in capsys.readouterr().out.splitlines() if line.startswith(doctor.FAIL)]
    assert any(line.startswith(f"{doctor.FAIL} LLM https://models.example/v1: ") and "socks5://p:1080" in line
               for line in failed), failed
