"""Workspace init never overwrites; check lists problems a person can fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.agent.workspace import BUNDLED_WORKSPACE, check_workspace, init_workspace


def test_init_creates_the_defaults_once(tmp_path: Path) -> None:
    target = tmp_path / "ws"
    created = init_workspace(target)
    expected = {"SOUL.md", "AGENTS.md", "IDENTITY.md", "USER.md", "TOOLS.md", "MEMORY.md", "roles/default.md",
                "roles/coder.md", "skills/code-reviewer.md", "skills/weekly-report.md", "skills/summarize-url.md"}
    assert set(created) == expected
    assert (target / "SOUL.md").read_text(encoding="utf-8") == (BUNDLED_WORKSPACE / "SOUL.md").read_text(
        encoding="utf-8")
    assert init_workspace(target) == []
    assert check_workspace(target) == []


def test_init_never_overwrites_edits(tmp_path: Path) -> None:
    init_workspace(tmp_path)
    (tmp_path / "SOUL.md").write_text("My own soul.", encoding="utf-8")
    (tmp_path / "USER.md").unlink()
    assert init_workspace(tmp_path) == ["USER.md"]
    assert (tmp_path / "SOUL.md").read_text(encoding="utf-8") == "My own soul."


def test_init_refuses_a_file_path(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        init_workspace(tmp_path / "file")


def test_default_files_say_the_bot_answers_in_the_users_language() -> None:
    assert "language the user writes in" in (BUNDLED_WORKSPACE / "SOUL.md").read_text(encoding="utf-8")


def test_check_reports_each_problem(tmp_path: Path) -> None:
    assert check_workspace(tmp_path / "missing") == [
        f"workspace folder {tmp_path / 'missing'} does not exist (run `bothub init`)"]
    init_workspace(tmp_path)
    (tmp_path / "AGENTS.md").unlink()
    (tmp_path / "SOUL.md").write_text("  \n", encoding="utf-8")
    (tmp_path / "USER.md").write_bytes(b"\xff\xfe bad bytes \xff")
    (tmp_path / "roles" / "default.md").unlink()
    (tmp_path / "skills" / "broken.md").write_text("---\nname: [oops\n---\nbody\n", encoding="utf-8")
    problems = check_workspace(tmp_path)
    assert problems[:4] == [
        "SOUL.md is empty; it is required",
        "AGENTS.md is missing; it is required (run `bothub init` to restore the default)",
        "USER.md is not UTF-8 text",
        "roles/default.md is missing; unknown roles fall back to it",
    ]
    assert len(problems) == 5 and problems[4].startswith("skills/broken.md: front matter is not valid YAML")
