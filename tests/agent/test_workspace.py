"""Workspace init never overwrites; check lists problems a person can fix."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from bot.agent.workspace import (
    BUNDLED_WORKSPACE,
    check_workspace,
    init_workspace,
    missing_required,
    prepare_workspace,
    ready_workspace,
)
from bot.config import ConfigError


def test_init_creates_the_defaults_once(tmp_path: Path) -> None:
    target = tmp_path / "ws"
    created = init_workspace(target)
    expected = {"SOUL.md", "AGENTS.md", "IDENTITY.md", "USER.md", "TOOLS.md", "MEMORY.md", "HEARTBEAT.md",
                "roles/default.md", "roles/coder.md", "skills/code-reviewer.md", "skills/weekly-report.md",
                "skills/summarize-url.md"}
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


def test_check_reports_what_start_up_refuses(tmp_path: Path) -> None:
    init_workspace(tmp_path)
    (tmp_path / "AGENTS.md").unlink()
    (tmp_path / "SOUL.md").write_text("  \n", encoding="utf-8")
    (tmp_path / "USER.md").write_bytes(b"\xff\xfe bad bytes \xff")
    (tmp_path / "roles" / "default.md").unlink()
    (tmp_path / "skills" / "broken.md").write_text("---\nname: [oops\n---\nbody\n", encoding="utf-8")
    assert missing_required(tmp_path) == ["AGENTS.md", "roles/default.md"]
    assert check_workspace(tmp_path) == ["SOUL.md is empty; it is required", "USER.md is not UTF-8 text"]
    assert prepare_workspace(tmp_path) == ["AGENTS.md", "roles/default.md"]  # what start-up brings back
    assert missing_required(tmp_path) == [] and (tmp_path / "SOUL.md").read_text() != ""


def test_prepare_restores_only_required_files(tmp_path: Path) -> None:
    init_workspace(tmp_path)
    (tmp_path / "SOUL.md").unlink()
    (tmp_path / "skills" / "weekly-report.md").unlink()  # deleted on purpose: stays deleted
    assert prepare_workspace(tmp_path) == ["SOUL.md"]
    assert not (tmp_path / "skills" / "weekly-report.md").exists()


def test_workspaces_readied_at_once_never_see_a_file_half_copied(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """The dashboard's page and the agent's runner ready a new agent's workspace at the same moment."""
    refused: list[str] = []
    for n in range(40):
        folder, start = tmp_path / f"ws{n}", threading.Barrier(4)

        def ready(folder: Path = folder, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                ready_workspace(folder)
            except ConfigError as e:
                refused.append(str(e))

        readers = [threading.Thread(target=ready) for _ in range(4)]
        for thread in readers:
            thread.start()
        for thread in readers:
            thread.join()
    assert refused == []
    assert not [r for r in caplog.records if "skill skipped" in r.getMessage()]  # none read without its front matter
