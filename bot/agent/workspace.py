"""Create and check a workspace: the Markdown files that shape the agent (seed 003 §2).

`init_workspace` copies the bundled defaults but never overwrites what a person has edited;
`prepare_workspace` is what start-up does (a missing required file comes back from the defaults);
`check_workspace` lists what start-up refuses, in the same words for `bothub doctor`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
from pathlib import Path

from bot.agent.prompt import P0_FILES, WORKSPACE_FILES
from bot.agent.skill_sources import workspace_skills
from bot.agent.skills import SkillSet
from bot.config import ConfigError

log = logging.getLogger("bothub.workspace")

BUNDLED_WORKSPACE = Path(__file__).resolve().parents[2] / "workspace"
DEFAULT_ROLE = "roles/default.md"
REQUIRED_FILES = (*P0_FILES, DEFAULT_ROLE)


def init_workspace(path: Path, source: Path = BUNDLED_WORKSPACE) -> list[str]:
    """Copy missing default files into `path`; returns the created files, relative to `path`."""
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(f"workspace path {path} exists and is not a folder")
    created: list[str] = []
    for src in sorted(source.rglob("*.md")):
        relative = src.relative_to(source)
        target = path / relative
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if _copy_whole(src, target):
            created.append(relative.as_posix())
    return created


def _copy_whole(src: Path, target: Path) -> bool:
    """Copy `src` to `target` unless it exists, in one step: a file appears with all its text or not at all. Two
    at once (the dashboard's page and the agent's runner readying a new agent's workspace) used to see the other's
    file half copied — an empty SOUL.md refused, a skill without its front matter."""
    draft = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    shutil.copyfile(src, draft)
    try:
        os.link(draft, target)  # fails if it exists: never over a file a person (or the other copy) put there
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            draft.unlink()
    return True


def missing_required(path: Path) -> list[str]:
    """Required files that are absent: start-up restores them from the defaults (a new workspace gets all)."""
    return [name for name in REQUIRED_FILES if not (path / name).exists()]


def prepare_workspace(path: Path, source: Path = BUNDLED_WORKSPACE) -> list[str]:
    """What start-up does: create a new workspace from the defaults, or bring back missing required files."""
    if not path.exists():
        return init_workspace(path, source)
    restored = []
    for name in missing_required(path):
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        if _copy_whole(source / name, path / name):
            restored.append(name)
    return restored


def check_workspace(path: Path) -> list[str]:
    """What start-up refuses to run with (after `prepare_workspace`); empty means the workspace is usable.

    Broken skills are not listed: they are skipped, and `/skills` and `bothub doctor` show them.
    """
    if not path.is_dir():
        return [f"workspace {path} is not a folder"]
    problems: list[str] = []
    for name in WORKSPACE_FILES:
        file = path / name
        if file.exists():
            problems += _unreadable(file, name, required=name in P0_FILES)
    roles = path / "roles"
    for role in sorted(roles.glob("*.md")) if roles.is_dir() else []:
        problems += _unreadable(role, f"roles/{role.name}", required=False)
    return problems


def _unreadable(file: Path, label: str, required: bool) -> list[str]:
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return [f"{label} is not UTF-8 text"]
    except OSError as e:
        return [f"{label} cannot be read: {e.strerror}"]
    if required and not text.strip():
        return [f"{label} is empty; it is required"]
    return []


def ready_workspace(workspace: Path) -> SkillSet:
    """A workspace made ready (missing files restored from the bundled one) and checked, and its skills (its own,
    installed and built-in: bot/agent/skill_sources.py)."""
    if restored := prepare_workspace(workspace):
        log.info("workspace %s: created %s", workspace, ", ".join(restored))
    if problems := check_workspace(workspace):  # `bothub doctor` says the same
        raise ConfigError(f"workspace {workspace}: " + "; ".join(problems))
    skills = workspace_skills(workspace)
    for skill in skills.broken():
        log.warning("skill skipped: %s", skill.status_line())
    return skills
