"""Create and check a workspace: the Markdown files that shape the agent (seed 003 §2).

`init_workspace` copies the bundled defaults but never overwrites what a person has edited;
`check_workspace` lists problems in plain words for `bothub doctor` and start-up.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.agent.prompt import P0_FILES, WORKSPACE_FILES
from bot.agent.skills import SkillSet

BUNDLED_WORKSPACE = Path(__file__).resolve().parents[2] / "workspace"


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
        shutil.copyfile(src, target)
        created.append(relative.as_posix())
    return created


def check_workspace(path: Path) -> list[str]:
    """Everything that would make the agent misbehave; an empty list means the workspace is fine."""
    if not path.is_dir():
        return [f"workspace folder {path} does not exist (run `bothub init`)"]
    problems: list[str] = []
    for name in WORKSPACE_FILES:
        file = path / name
        if not file.exists():
            if name in P0_FILES:
                problems.append(f"{name} is missing; it is required (run `bothub init` to restore the default)")
            continue
        problems += _unreadable(file, name, required=name in P0_FILES)
    roles = path / "roles"
    if not (roles / "default.md").is_file():
        problems.append("roles/default.md is missing; unknown roles fall back to it")
    for role in sorted(roles.glob("*.md")) if roles.is_dir() else []:
        problems += _unreadable(role, f"roles/{role.name}", required=False)
    problems += [f"skills/{s.path.name if s.path else s.name}: {s.error}"
                 for s in SkillSet.load(path / "skills").broken()]
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
