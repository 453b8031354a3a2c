"""Core (bot/) never names a platform: adapters describe themselves through their spec."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.adapter import find_spec, installed_platforms, installed_specs
from bot.config import Config, ConfigError, load_config

CORE = Path(__file__).resolve().parents[2] / "bot"
PLATFORM_NAMES = re.compile(r"telegram|discord|feishu|lark|dingtalk|钉钉|slack|wecom|企业微信", re.IGNORECASE)


def test_no_core_file_names_a_platform() -> None:
    hits = [f"{path.relative_to(CORE.parent)}:{n}: {line.strip()}"
            for path in sorted(CORE.rglob("*.py"))
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if PLATFORM_NAMES.search(line)]
    assert hits == []


def test_every_adapter_folder_exports_a_spec_named_after_it() -> None:
    names = installed_platforms()
    assert {"console", "dingtalk", "discord", "feishu", "telegram", "wecom"} <= set(names)
    assert [spec.name for spec in installed_specs()] == list(names)
    assert find_spec("no_such_platform") is None and find_spec("../bot") is None


def test_a_section_is_checked_by_its_adapters_model_and_errors_name_it() -> None:
    cfg = Config.model_validate({"telegram": {"webhook_url": "https://example.org/hook"}})
    assert cfg.sections["telegram"].model_dump()["webhook_url"] == "https://example.org/hook"
    try:
        Config.model_validate({"discord": {"no_such_option": True}})
    except ValueError as e:
        assert "discord.no_such_option" in str(e)
    else:
        raise AssertionError("an unknown option in an adapter's section must be refused")


def test_platforms_run_by_their_secrets_or_by_the_platforms_list(tmp_path: Path) -> None:
    path = tmp_path / "bothub.yaml"
    path.write_text("language: en\n", encoding="utf-8")
    assert load_config(path, env={}).enabled_platforms == []
    assert load_config(path, env={"TELEGRAM_BOT_TOKEN": "1:x"}).enabled_platforms == ["telegram"]
    assert load_config(path, env={"FEISHU_APP_ID": "cli_x"}).enabled_platforms == []  # the secret is missing
    path.write_text("platforms: [discord]\ntelegram:\n  enabled: true\n", encoding="utf-8")
    assert load_config(path, env={"TELEGRAM_BOT_TOKEN": "1:x"}).enabled_platforms == ["discord"]
    path.write_text("platforms: [myspace]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no adapter named myspace"):
        load_config(path, env={})


def test_reading_the_specs_imports_no_platform_sdk() -> None:
    """`bothub chat` reads every spec; lark-oapi alone takes seconds to import, so specs must not."""
    probe = ("import sys; from bot.adapter import installed_specs; from bot.config import Config; "
             "installed_specs(); Config.model_validate({'feishu': {'transport': 'webhook'}}); "
             "print(sorted(m for m in ('telegram', 'discord', 'lark_oapi') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=CORE.parent).stdout
    assert out.strip() == "[]"
