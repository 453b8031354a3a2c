"""Each way a skill file can be wrong, with the sentence its author reads in `/skills` and `bothub doctor`; and the
trigger sections of seed-003 skills under each heading, as a list or as quoted phrases."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.agent.skills import SkillSet
from tests.agent.test_skills import write_skills

BROKEN = {
    "list.md": ("---\n- one\n- two\n---\nbody\n", "front matter must be a mapping of fields"),
    "empty.md": ("---\nname: empty\n---\n\n", "the skill has no instructions after the front matter"),
    "enabled.md": ("---\nname: flag\nenabled: 'yes'\n---\nbody\n", "'enabled' must be true or false"),
    "tools.md": ("---\nname: tooled\nmode: tool\ntools: read_file\n---\nbody\n", "'tools' must be a list of names"),
    "blank-tool.md": ("---\nname: tooled2\ntools: ['  ']\n---\nbody\n", "'tools' must be a list of names"),
    "triggers.md": ("---\nname: trig\ntriggers: [1, 2]\n---\nbody\n", "'triggers' must be a list of names"),
    "bool-turns.md": ("---\nname: bt\nmax_turns: true\n---\nbody\n", "'max_turns' must be a whole number"),
    "named.yaml": ("name: has space\nsystem_prompt: hi\n", "'name' must be letters, digits, '-' or '_'"),
    "input.yaml": ("name: typed\nsystem_prompt: hi\ninput: [a, b]\n", "'input' must be a mapping"),
}


@pytest.mark.parametrize("file", sorted(BROKEN))
def test_a_broken_skill_says_what_is_wrong_and_is_never_used(tmp_path: Path, file: str) -> None:
    text, said = BROKEN[file]
    skills = SkillSet.load(write_skills(tmp_path, {file: text, "fine.md": "---\nname: fine\n---\nok\n"}))
    [broken] = skills.broken()
    assert broken.path is not None and broken.path.name == file
    assert broken.error is not None and broken.error.startswith(said)
    assert broken.status_line().startswith(f"[broken] {Path(file).stem} ")
    assert [s.name for s in skills.prompt_skills("") + skills.tool_skills()] == ["fine"]


def test_seed003_triggers_under_each_heading_as_a_list_or_quoted(tmp_path: Path) -> None:
    skills = SkillSet.load(write_skills(tmp_path, {
        "listed.md": "# Skill: listed\n\n## Steps\n- not a trigger\n\n## Triggers\n- weekly report\n* 周报\n-\n",
        "quoted.md": "# quoted\n\n## Trigger\nWhen the user says \"ship it\" or 「发布」.\n",
        "none.md": "# Skill: always\n\nJust do it.\n",
    }))
    listed, quoted, always = (skills.get(n) for n in ("listed", "quoted", "always"))
    assert listed and (listed.triggers, listed.description) == (["weekly report", "周报"], "- weekly report")
    assert quoted and quoted.triggers == ["ship it", "发布"]
    assert always and (always.triggers, always.description) == ([], "")
    assert [s.name for s in skills.prompt_skills("the 周报 please")] == ["listed", "always"]  # in file order
    assert [s.name for s in skills.prompt_skills("please SHIP IT")] == ["always", "quoted"]
    assert [s.name for s in skills.prompt_skills("hello")] == ["always"]
