"""Typed YAML skills (seed 001) and the built-in skills: inputs checked before the nested agent runs, the output
folder made in the chat folder, a workspace skill replacing the built-in one of its name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.agent.skill_sources import workspace_skills
from bot.agent.skill_tools import register_skill_tools
from bot.agent.skills import BUILTIN_DIR, SkillSet
from bot.agent.tools import default_registry
from bot.agent.tools.registry import ToolContext
from bot.agent.workspace import BUNDLED_WORKSPACE
from tests.agent.conftest import MakeLLM
from tests.agent.test_skills import loop_factory, write_skills
from tests.fakes.openai_api import FakeOpenAI, Text

TRANSLATE = """
name: translate-file
description: Translate a file
model: small-model
system_prompt: |
  You translate files.
tools: [read_document, write_file]
max_turns: 3
input:
  description: a file and a language
  args:
    - {name: to, type: string, required: true}
    - {name: file, type: file, required: true, description: the file}
    - {name: pages, type: integer}
output:
  description: the translation
  directory: translations
"""


def test_builtin_skills_all_load_as_typed_tools() -> None:
    skills = SkillSet.load(Path("/nonexistent"), BUILTIN_DIR)
    assert skills.broken() == []
    names = {s.name for s in skills.skills}
    assert len(names) >= 10 and {"summarize-url", "translate", "weekly-report", "meeting-notes",
                                 "code-review"} <= names
    assert {(s.format, s.mode, s.source) for s in skills.skills} == {("yaml", "tool", "builtin")}
    assert all(s.description and s.body for s in skills.skills)


def test_a_workspace_skill_replaces_the_builtin_one_of_its_name() -> None:
    skills = workspace_skills(BUNDLED_WORKSPACE)
    summarize = [s for s in skills.skills if s.name == "summarize-url"]
    assert len(summarize) == 1 and summarize[0].source == "workspace" and summarize[0].format == "frontmatter"
    assert summarize[0].status_line().startswith("[    on] summarize-url (tool, workspace) — ")
    assert next(s for s in skills.skills if s.name == "translate").status_line().startswith(
        "[    on] translate (tool, builtin) — ")


@pytest.mark.parametrize(("text", "error"), [
    ("name: x\n", "'system_prompt' is required"),
    ("system_prompt: hi\noutput: {directory: ../up}\n", "'output.directory' must be one folder name"),
    ("system_prompt: hi\noutput: {directory: a/b}\n", "'output.directory' must be one folder name"),
    ("system_prompt: hi\ninput: {args: [{name: f, type: blob}]}\n", "'type' must be one of"),
    ("system_prompt: hi\ninput: {args: [{name: task}]}\n", "declared twice (or is 'task'"),
    ("system_prompt: hi\ninput: {args: [{type: file}]}\n", "needs a 'name'"),
    ("system_prompt: hi\nmax_turns: 99\n", "'max_turns' must be a whole number"),
    ("[1, 2", "not valid YAML"),
], ids=["no-prompt", "dotdot", "path", "type", "task", "no-name", "turns", "yaml"])
def test_broken_yaml_skills_say_why(tmp_path: Path, text: str, error: str) -> None:
    skills = SkillSet.load(write_skills(tmp_path, {"bad.yaml": text}))
    [broken] = skills.broken()
    assert broken.name == "bad" and broken.error is not None and error in broken.error


async def test_inputs_are_checked_and_the_output_folder_is_made(fake: FakeOpenAI, make_llm: MakeLLM,
                                                                ctx: ToolContext, tmp_path: Path) -> None:
    registry = default_registry()
    skills = SkillSet.load(write_skills(tmp_path / "skills", {"translate-file.yaml": TRANSLATE}))
    register_skill_tools(registry, skills, loop_factory(await make_llm()), "default-model")
    spec = next(t for t in registry.get_openai_tools() if t["function"]["name"] == "skill_translate-file")
    assert spec["function"]["parameters"]["required"] == ["to", "file"]
    assert spec["function"]["parameters"]["properties"]["pages"] == {"type": "integer"}

    async def run(**args: object) -> str:
        return await registry.execute("skill_translate-file", json.dumps(args), ctx)

    assert await run(to="zh") == "Error: argument 'file' is required"
    assert await run(to="zh", file="missing.txt") == (
        "Error: argument 'file': no file 'missing.txt' in this chat's folder")
    assert "outside" in (await run(to="zh", file="../../etc/passwd")).lower()
    (ctx.workdir / "uploads").mkdir(parents=True)
    (ctx.workdir / "uploads" / "a.txt").write_text("hello", encoding="utf-8")
    (ctx.workdir / "link.txt").symlink_to(ctx.workdir / "uploads" / "a.txt")
    assert "link" in await run(to="zh", file="link.txt")
    assert await run(to="zh", file="uploads") == "Error: argument 'file': no file 'uploads' in this chat's folder"
    f = "uploads/a.txt"
    assert await run(to="zh", file=f, pages="two") == "Error: argument 'pages': must be of type integer"
    assert await run(to="zh", file=f, pages=True) == "Error: argument 'pages': must be of type integer"
    assert await run(to=3, file=f) == "Error: argument 'to': must be of type string"
    assert (await run(to="zh", file=f, colour="red")).startswith("Error: unknown argument(s) colour")
    assert fake.requests == [] and not (ctx.workdir / "translations").exists()

    fake.script(Text("translated into translations/a.zh.txt"))
    assert await run(task="translate it", to="zh", file="uploads/a.txt") == "translated into translations/a.zh.txt"
    assert (ctx.workdir / "translations").is_dir()
    [request] = [r["body"] for r in fake.requests]
    assert request["model"] == "small-model"
    assert request["messages"][0]["content"].endswith("You translate files.")
    assert request["messages"][1]["content"] == (
        "translate it\nto: zh\nfile: uploads/a.txt\n"
        "Write any files you make into the folder translations/ of this chat's folder.")
    assert sorted(t["function"]["name"] for t in request["tools"]) == ["read_document", "write_file"]
