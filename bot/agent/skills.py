"""Skills from `skills/*.md` and `skills/*.yaml`, read once: seed-000 YAML front matter, seed-003 `# Skill:`
Markdown, or seed-001 typed YAML (bot/agent/skill_yaml.py). What one workspace can use, with the installed packages
and the skills shipped in bot/skills_builtin/, is put together by bot/agent/skill_sources.py.

A broken file never stops the bot: it becomes a Skill with `error` set, which `/skills` and
`bothub doctor` show, and which is never embedded or registered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from bot.agent.skill_yaml import SkillArg, load_yaml, parse_args, parse_output

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "skills_builtin"
SUFFIXES = (".md", ".yaml", ".yml")
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,48}$")  # becomes part of a tool name: skill_<name>
DEFAULT_SKILL_TURNS = 10
_TITLE_RE = re.compile(r"^#\s+(?:Skill:\s*)?(.+?)\s*$", re.MULTILINE)
_SECTION_RE = r"^##\s+{heading}\s*$\n(.*?)(?=^##\s|\Z)"
_QUOTED_RE = re.compile(r"[“\"「『]([^”\"」』]{1,60})[”\"」』]")
TRIGGER_HEADINGS = ("触发条件", "Triggers", "Trigger")


@dataclass
class Skill:
    name: str
    description: str = ""
    enabled: bool = True
    body: str = ""
    format: Literal["frontmatter", "seed003", "yaml"] = "frontmatter"
    mode: Literal["prompt", "tool"] = "prompt"
    model: str | None = None
    tools: list[str] = field(default_factory=list)
    max_turns: int = DEFAULT_SKILL_TURNS
    triggers: list[str] = field(default_factory=list)
    path: Path | None = None
    error: str | None = None  # set when the file is broken; the skill is then never used
    args: list[SkillArg] = field(default_factory=list)  # typed inputs (YAML skills), checked before a run
    output_dir: str | None = None  # folder in the chat folder the skill writes into (YAML skills)
    source: Literal["builtin", "installed", "workspace"] = "workspace"
    author: str | None = None  # who asked the agent to write it (skill_create's `created_by`)

    @property
    def tool_name(self) -> str:
        return f"skill_{self.name}"

    def status_line(self) -> str:
        """`[    on] name (prompt) — what it does`, or why it is broken: one format for /skills and doctor."""
        state = "broken" if self.error else ("on" if self.enabled else "off")
        kind = "tool" if self.mode == "tool" else "prompt"
        made = f", made by {self.author}" if self.author else ""
        return f"[{state:>6}] {self.name} ({kind}, {self.source}{made}) — {self.error or self.description}"

    def matches(self, user_text: str) -> bool:
        """Seed 003: a skill without triggers always applies; otherwise one trigger must occur."""
        if not self.triggers:
            return True
        lowered = user_text.lower()
        return any(t.lower() in lowered for t in self.triggers)


class SkillError(ValueError):
    """Why a skill file cannot be used, worded for the person who wrote it."""


def parse_skill(path: Path, text: str) -> Skill:
    if path.suffix in (".yaml", ".yml"):
        return _parse_yaml(path, text)
    if text.lstrip("\ufeff").startswith("---"):
        return _parse_frontmatter(path, text.lstrip("\ufeff"))
    return _parse_seed003(path, text)


def _parse_frontmatter(path: Path, text: str) -> Skill:
    head, sep, body = text[3:].partition("\n---")
    if not sep:
        raise SkillError("front matter is not closed with a '---' line")
    try:
        meta = yaml.safe_load(head) or {}
    except yaml.YAMLError as e:
        raise SkillError(f"front matter is not valid YAML: {e}") from e
    if not isinstance(meta, dict):
        raise SkillError("front matter must be a mapping of fields")
    name = str(meta.get("name") or "").strip()
    if not NAME_RE.match(name):
        raise SkillError("'name' is required: letters, digits, '-' or '_', at most 48 characters")
    mode = meta.get("mode", "prompt")
    if mode not in ("prompt", "tool"):
        raise SkillError("'mode' must be 'prompt' or 'tool'")
    body = body.partition("\n")[2].strip()
    if not body:
        raise SkillError("the skill has no instructions after the front matter")
    return Skill(
        name=name,
        description=str(meta.get("description") or "").strip(),
        enabled=_bool_field(meta, "enabled"),
        body=body,
        format="frontmatter",
        mode=mode,
        model=str(meta["model"]) if meta.get("model") else None,
        tools=_str_list(meta, "tools"),
        max_turns=_turns(meta),
        triggers=_str_list(meta, "triggers"),
        path=path,
        author=str(meta["created_by"]) if meta.get("created_by") else None,
    )


def _parse_yaml(path: Path, text: str) -> Skill:
    meta = load_yaml(text, SkillError)
    name = str(meta.get("name") or path.stem).strip()
    if not NAME_RE.match(name):
        raise SkillError("'name' must be letters, digits, '-' or '_', at most 48 characters")
    given = meta.get("input")
    if given is not None and not isinstance(given, dict):
        raise SkillError("'input' must be a mapping with 'description' and 'args'")
    return Skill(
        name=name,
        description=str(meta.get("description") or "").strip(),
        enabled=_bool_field(meta, "enabled"),
        body=meta["system_prompt"].strip(),
        format="yaml",
        mode="tool",
        model=str(meta["model"]) if meta.get("model") else None,
        tools=_str_list(meta, "tools"),
        max_turns=_turns(meta),
        path=path,
        args=parse_args((given or {}).get("args"), SkillError),
        output_dir=parse_output(meta.get("output"), SkillError),
    )


def _bool_field(meta: dict[str, Any], key: str) -> bool:
    value = meta.get(key, True)
    if not isinstance(value, bool):
        raise SkillError(f"'{key}' must be true or false")
    return value


def _str_list(meta: dict[str, Any], key: str) -> list[str]:
    value = meta.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SkillError(f"'{key}' must be a list of names")
    return [v.strip() for v in value]


def _turns(meta: dict[str, Any]) -> int:
    value = meta.get("max_turns", DEFAULT_SKILL_TURNS)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 30:
        raise SkillError("'max_turns' must be a whole number from 1 to 30")
    return value


def _parse_seed003(path: Path, text: str) -> Skill:
    title = _TITLE_RE.search(text)
    if title is None:
        raise SkillError("no front matter ('---') and no '# Skill: <name>' title")
    trigger_text = ""
    for heading in TRIGGER_HEADINGS:
        section = re.search(_SECTION_RE.format(heading=re.escape(heading)), text, re.MULTILINE | re.DOTALL)
        if section:
            trigger_text = section.group(1).strip()
            break
    return Skill(
        name=title.group(1),
        description=trigger_text.splitlines()[0][:120] if trigger_text else "",
        body=text.strip(),
        format="seed003",
        triggers=_triggers(trigger_text),
        path=path,
    )


def _triggers(section: str) -> list[str]:
    """Quoted phrases ("采集岗位", “weekly report”) if any, else one trigger per list item."""
    quoted = [q.strip() for q in _QUOTED_RE.findall(section) if q.strip()]
    if quoted:
        return quoted
    items = [ln.strip().lstrip("-*").strip() for ln in section.splitlines() if ln.strip().startswith(("-", "*"))]
    return [i for i in items if i]


def _read_folder(folder: Path, source: Literal["builtin", "workspace"]) -> list[Skill]:
    skills: list[Skill] = []
    seen: dict[str, Path] = {}
    files = sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES) if folder.is_dir() else []
    for path in files:
        try:
            skill = parse_skill(path, path.read_text(encoding="utf-8"))
        except (SkillError, OSError, UnicodeDecodeError) as e:
            skills.append(Skill(name=path.stem, enabled=False, path=path, error=str(e), source=source))
            continue
        skill.source = source
        if skill.name in seen:
            skill.error = f"another skill file ({seen[skill.name].name}) already uses the name {skill.name!r}"
        seen.setdefault(skill.name, path)
        skills.append(skill)
    return skills


class SkillSet:
    def __init__(self, skills: list[Skill]) -> None:
        self.skills = skills

    @classmethod
    def load(cls, skills_dir: Path, builtin: Path | None = None) -> SkillSet:
        """The workspace's `skills_dir` (a missing folder means none), then the built-in skills, each read once and
        sorted so prompts are stable; a workspace skill replaces the built-in one of its name."""
        workspace = _read_folder(skills_dir, "workspace")
        overridden = {s.name for s in workspace}
        shipped = [s for s in _read_folder(builtin, "builtin") if s.name not in overridden] if builtin else []
        return cls(workspace + shipped)

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name and s.error is None), None)

    def _usable(self) -> list[Skill]:
        return [s for s in self.skills if s.enabled and s.error is None]

    def prompt_skills(self, user_text: str = "") -> list[Skill]:
        """Enabled prompt skills to embed: those without triggers always, the others when one matches."""
        return [s for s in self._usable() if s.mode == "prompt" and s.matches(user_text)]

    def tool_skills(self) -> list[Skill]:
        return [s for s in self._usable() if s.mode == "tool"]

    def broken(self) -> list[Skill]:
        return [s for s in self.skills if s.error is not None]
