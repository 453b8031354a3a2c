"""The skills one workspace can use: its own `skills/` folder, then the packages installed there
(bot/agent/skill_packages.py), then the built-in skills; a name used earlier hides a later one. Every agent
workspace resolves its skills through here."""

from __future__ import annotations

from pathlib import Path

from bot.agent.skill_packages import installed_skills
from bot.agent.skills import BUILTIN_DIR, SkillSet


def workspace_skills(workspace: Path) -> SkillSet:
    loaded = SkillSet.load(workspace / "skills", BUILTIN_DIR)
    own = [s for s in loaded.skills if s.source == "workspace"]
    taken = {s.name for s in own}
    installed = [s for s in installed_skills(workspace / "skills") if s.name not in taken]
    taken |= {s.name for s in installed}
    return SkillSet(own + installed + [s for s in loaded.skills if s.source == "builtin" and s.name not in taken])
