"""`bothub skills`, `pair`, `migrate-store`, `api-token` and `set-password` in process (the parser `bothub` uses):
what each refuses, with its sentence and exit code, before anything is changed; a package installed twice."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from bot.adapter import installed_specs
from bot.cli import maintenance, skills_cli
from bot.cli.main import build_parser
from bot.config import Config
from bot.i18n import t
from tests.cli.test_skill_install import MANIFEST, OUTLINE, TIDY
from tests.harness import make_config


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    made, _ = make_config(tmp_path, "http://127.0.0.1:9/v1")
    return made  # type: ignore[no-any-return]


def parsed(*argv: str) -> argparse.Namespace:
    return build_parser(installed_specs()).parse_args(list(argv))


def test_skill_packages_refused_before_anything_is_installed(cfg: Config, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    kit = tmp_path / "kit"
    kit.mkdir()
    for name, text in (("bothub-skill.yaml", MANIFEST), ("tidy.md", TIDY), ("outline.yaml", OUTLINE)):
        (kit / name).write_text(text, encoding="utf-8")
    assert skills_cli.run(cfg, parsed("skills", "list")) == 0
    assert capsys.readouterr().out == t("en", "cli_skills_none") + "\n"
    assert skills_cli.run(cfg, parsed("skills", "install")) == 2
    assert capsys.readouterr().err == t("en", "cli_skills_needs_source") + "\n"
    assert skills_cli.run(cfg, parsed("skills", "update", str(kit), "--yes")) == 1
    assert capsys.readouterr().err == t("en", "cli_skills_not_installed", name="notes-kit") + "\n"
    assert skills_cli.run(cfg, parsed("skills", "install", str(kit), "--yes")) == 0
    capsys.readouterr()
    assert skills_cli.run(cfg, parsed("skills", "install", str(kit), "--yes")) == 1
    assert capsys.readouterr().err == t("en", "cli_skills_already", name="notes-kit") + "\n"


async def test_maintenance_commands_refused_with_their_reason(cfg: Config, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    refused = {
        ("pair", "approve", "NOPE42", "--platform", "telegram"): (
            1, t("en", "cli_no_pairing", platform="telegram", code="NOPE42")),
        ("migrate-store", "--from", "sqlite:///x.sqlite3", "--to", "mysql://db"): (
            2, "bothub: migrate-store copies sqlite:///… into postgresql://…"),
        ("api-token", "create"): (2, "bothub: api-token create needs a name"),
        ("api-token", "revoke", " "): (2, "bothub: api-token revoke needs the token id"),
        ("set-password",): (1, f"bothub: choose at least {maintenance.MIN_PASSWORD} characters; nothing was changed"),
    }
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))  # piped, not a terminal
    for argv, (code, said) in refused.items():
        args = parsed(*argv)
        assert await maintenance.run(cfg, args.command, args, {}) == code, argv
        assert capsys.readouterr().err == said + "\n", argv
    assert not (cfg.data_dir / "admin-password").exists()  # no hash stored
