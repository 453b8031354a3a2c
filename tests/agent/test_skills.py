"""Skill files in both formats, broken files, and tool skills running nested agents against FakeOpenAI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.agent.events import RunFailed
from bot.agent.llm import LLMClient
from bot.agent.loop import AgentLoop
from bot.agent.skill_tools import LANGUAGE_LEAD_IN, MakeLoop, register_skill_tools
from bot.agent.skills import SkillSet
from bot.agent.tools import default_registry
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.agent.workspace import BUNDLED_WORKSPACE
from tests.agent.conftest import MakeLLM
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls


def write_skills(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def tool_skill(name: str, tools: list[str], model: str | None = None, body: str | None = None) -> str:
    model_line = f"model: {model}\n" if model else ""
    return (f"---\nname: {name}\ndescription: the {name} skill\nmode: tool\n{model_line}"
            f"tools: [{', '.join(tools)}]\nmax_turns: 5\n---\n{body or f'You are the {name} skill.'}\n")


def test_each_format_is_parsed(tmp_path: Path) -> None:
    skills = SkillSet.load(write_skills(tmp_path, {
        "reviewer.md": "---\nname: code-reviewer\ndescription: Reviews code\nenabled: true\n---\nReview well.\n",
        "jobs.md": ("# Skill: FDE 岗位采集\n\n## 触发条件\n当用户请求“采集岗位”、“更新 jobs”时激活。\n\n"
                    "## 执行步骤\n1. 搜索\n\n## 约束\n- 不超过 30 条\n"),
        "summary.md": tool_skill("summarize", ["read_file", "web_fetch"], model="cheap-model"),
    }))
    reviewer, jobs, summary = (skills.get(n) for n in ("code-reviewer", "FDE 岗位采集", "summarize"))
    assert reviewer and reviewer.format == "frontmatter" and reviewer.mode == "prompt"
    assert (reviewer.description, reviewer.body, reviewer.enabled) == ("Reviews code", "Review well.", True)
    assert jobs and jobs.format == "seed003" and jobs.triggers == ["采集岗位", "更新 jobs"]
    assert "## 约束" in jobs.body
    assert summary and summary.mode == "tool" and summary.tools == ["read_file", "web_fetch"]
    assert (summary.model, summary.max_turns, summary.tool_name) == ("cheap-model", 5, "skill_summarize")
    assert [s.name for s in skills.prompt_skills("请更新 JOBS")] == ["FDE 岗位采集", "code-reviewer"]
    assert [s.name for s in skills.prompt_skills("hello")] == ["code-reviewer"]
    assert [s.name for s in skills.tool_skills()] == ["summarize"]
    assert skills.broken() == []


def test_broken_files_are_reported_not_fatal(tmp_path: Path) -> None:
    folder = write_skills(tmp_path, {
        "bad-yaml.md": "---\nname: [unclosed\n---\nbody\n",
        "no-name.md": "---\ndescription: nameless\n---\nbody\n",
        "unclosed.md": "---\nname: open\nbody without end\n",
        "no-title.md": "just some text, no heading\n",
        "turns.md": "---\nname: turns\nmax_turns: 99\n---\nbody\n",
        "mode.md": "---\nname: moded\nmode: daemon\n---\nbody\n",
        "dup-a.md": "---\nname: twin\n---\nfirst\n",
        "dup-b.md": "---\nname: twin\n---\nsecond\n",
        "good.md": "---\nname: good\n---\nfine\n",
    })
    (folder / "latin1.md").write_bytes("---\nname: caf\xe9\n---\n".encode("latin-1"))
    skills = SkillSet.load(folder)
    broken = {s.path.name: s.error for s in skills.broken() if s.path}
    assert set(broken) == {"bad-yaml.md", "no-name.md", "unclosed.md", "no-title.md", "turns.md", "mode.md",
                           "dup-b.md", "latin1.md"}
    assert "not valid YAML" in (broken["bad-yaml.md"] or "")
    assert "'name' is required" in (broken["no-name.md"] or "")
    assert "already uses the name 'twin'" in (broken["dup-b.md"] or "")
    assert [s.name for s in skills.prompt_skills("")] == ["twin", "good"]


def test_bundled_workspace_skills_all_load() -> None:
    skills = SkillSet.load(BUNDLED_WORKSPACE / "skills")
    assert skills.broken() == []
    assert {s.format for s in skills.skills} == {"frontmatter", "seed003"}
    assert [s.name for s in skills.tool_skills()] == ["summarize-url"]


def test_cycles_are_refused_at_registration(tmp_path: Path) -> None:
    skills = SkillSet.load(write_skills(tmp_path, {
        "a.md": tool_skill("alpha", ["beta"]),
        "b.md": tool_skill("beta", ["skill_alpha", "read_file"]),
        "c.md": tool_skill("gamma", ["alpha"]),
        "d.md": tool_skill("delta", ["read_file"]),
        "e.md": tool_skill("selfish", ["selfish"]),
    }))
    registry = ToolRegistry()
    names = register_skill_tools(registry, skills, lambda *a: pytest.fail("no run expected"), "m")
    assert names == ["skill_delta"] and registry.names == ["skill_delta"]
    errors = {s.name: s.error for s in skills.broken()}
    assert errors["alpha"] == errors["beta"] == "skill cycle refused: alpha → beta → alpha"
    assert errors["gamma"] == "uses skill 'alpha', which is unavailable"
    assert errors["selfish"] == "skill cycle refused: selfish → selfish"


def loop_factory(llm: LLMClient) -> MakeLoop:
    """What the composition root passes: one shared LLM client, a loop per nested run."""
    return lambda tools, model, turns: AgentLoop(llm, tools, model, turns)


async def test_tool_skill_calls_another_tool_skill(fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext,
                                                   tmp_path: Path) -> None:
    skills = SkillSet.load(write_skills(tmp_path / "skills", {
        "outer.md": tool_skill("outer", ["inner"], model="outer-model", body="Outer instructions."),
        "inner.md": tool_skill("inner", ["read_file"], body="Inner instructions."),
    }))
    registry = default_registry()
    make_loop = loop_factory(await make_llm())
    assert register_skill_tools(registry, skills, make_loop, "skill-default") == ["skill_inner", "skill_outer"]
    fake.script(
        ToolCalls([("o1", "skill_inner", '{"task": "count the words"}')]),  # outer's first turn
        Text("inner says 42"),  # the inner agent answers
        Text("outer reports: 42"),  # outer's second turn, after the tool result
    )
    result = await registry.execute("skill_outer", '{"task": "analyse the notes"}', ctx)

    assert result == "outer reports: 42"
    outer1, inner, outer2 = (r["body"] for r in fake.requests)
    assert outer1["model"] == "outer-model" and outer2["model"] == "outer-model"
    assert inner["model"] == "skill-default"
    assert outer1["messages"][0]["content"] == f"{LANGUAGE_LEAD_IN}\n\nOuter instructions."
    assert outer1["messages"][1] == {"role": "user", "content": "analyse the notes"}
    assert [t["function"]["name"] for t in outer1["tools"]] == ["skill_inner"]
    assert [t["function"]["name"] for t in inner["tools"]] == ["read_file"]
    assert inner["messages"][0]["content"].endswith("Inner instructions.")
    assert inner["messages"][1] == {"role": "user", "content": "count the words"}
    assert outer2["messages"][-1] == {"role": "tool", "tool_call_id": "o1", "content": "inner says 42"}
    assert ctx.skill_chain == ()  # the caller's context is not changed


async def test_nesting_depth_is_limited_to_three(fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext,
                                                 tmp_path: Path) -> None:
    skills = SkillSet.load(write_skills(tmp_path / "skills", {
        "a.md": tool_skill("a", ["b"]), "b.md": tool_skill("b", ["c"]),
        "c.md": tool_skill("c", ["d"]), "d.md": tool_skill("d", []),
    }))
    registry = ToolRegistry()
    make_loop = loop_factory(await make_llm())
    register_skill_tools(registry, skills, make_loop, "m")
    chat = make_loop(registry, "chat-model", 5)
    fake.script(
        ToolCalls([("t0", "skill_a", '{"task": "go"}')]),  # chat (depth 0) → a (1)
        ToolCalls([("t1", "skill_b", '{"task": "go"}')]),  # a → b (2)
        ToolCalls([("t2", "skill_c", '{"task": "go"}')]),  # b → c (3)
        ToolCalls([("t3", "skill_d", '{"task": "go"}')]),  # c → d would be depth 4: refused, no request
        Text("c done"), Text("b done"), Text("a done"), Text("all done"),
    )
    events = [e async for e in chat.run([{"role": "user", "content": "start"}], ctx)]

    assert events[-1].text == "all done"  # type: ignore[union-attr]
    assert fake.pending == 0 and len(fake.requests) == 8
    c_second_turn = fake.requests[4]["body"]["messages"]
    assert c_second_turn[-1]["tool_call_id"] == "t3"
    assert "skills may nest at most 3 levels deep" in c_second_turn[-1]["content"]


@pytest.mark.parametrize("name", ["web.search", "x" * 60], ids=["dot", "too-long"])
async def test_a_skill_name_the_api_refuses_would_fail_every_run(
    fake: FakeOpenAI, make_llm: MakeLLM, ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    """Mutation: a laxer skill-name rule. The fake refuses the tool as the API would, so the test catches it."""
    folder = write_skills(tmp_path / "skills", {"s.md": tool_skill(name, ["read_file"])})
    assert SkillSet.load(folder).tool_skills() == []  # the real rule keeps such names out of the tool list
    monkeypatch.setattr("bot.agent.skills.NAME_RE", re.compile(r".+"))
    registry = default_registry()
    register_skill_tools(registry, SkillSet.load(folder), loop_factory(await make_llm()), "m")
    loop = AgentLoop(await make_llm(), registry, "m", 3)
    events = [e async for e in loop.run([{"role": "user", "content": "hi"}], ctx)]
    assert isinstance(events[-1], RunFailed)
    [refusal] = fake.refusals
    assert (refusal.status, refusal.param) == (400, f"tools[{len(registry.names) - 1}].function.name")
