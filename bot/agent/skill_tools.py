"""Tool skills (seed 001): each `mode: tool` skill becomes a tool that runs a nested agent.

The nested agent gets the skill body as its system prompt, only the skill's listed tools (which may be
other skills), its own model and turn limit. Cycles are refused when registering; depth is checked
at run time through `ToolContext.skill_chain`, so one chat's nesting never affects another's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from bot.agent.events import AgentEvent, RunFailed, RunFinished
from bot.agent.skill_yaml import check_inputs, output_folder, parameters
from bot.agent.skills import Skill, SkillSet
from bot.agent.tools.registry import ToolContext, ToolRegistry

MAX_DEPTH = 3
# Seed 001's language lead-in, so a whole chain of skills answers in the input's language.
LANGUAGE_LEAD_IN = (
    "IMPORTANT: Always respond in the same language as the input. If the input is in Chinese, your ENTIRE "
    "output, including all headers, table headers, labels and structural elements, MUST be in Chinese. "
    "Never mix languages in your response."
)


class NestedLoop(Protocol):
    def run(self, messages: list[dict[str, Any]], ctx: ToolContext,
            model: str | None = None) -> AsyncIterator[AgentEvent]: ...


MakeLoop = Callable[[ToolRegistry, str, int], NestedLoop]


class SkillTools:
    """The tool skills of one registry, replaced as a whole when the skills change (a skill_create)."""

    def __init__(self, registry: ToolRegistry, make_loop: MakeLoop, default_model: str) -> None:
        self.registry, self.make_loop, self.default_model = registry, make_loop, default_model
        self.names: list[str] = []

    def register(self, skills: SkillSet) -> None:
        for name in self.names:
            self.registry.remove(name)
        self.names = register_skill_tools(self.registry, skills, self.make_loop, self.default_model)


def register_skill_tools(registry: ToolRegistry, skills: SkillSet, make_loop: MakeLoop,
                         default_model: str) -> list[str]:
    """Register `skill_<name>` for every usable tool skill; returns the tool names registered."""
    by_name = {s.name: s for s in skills.tool_skills()}
    refuse_cycles(by_name)
    registered: list[str] = []
    for skill in by_name.values():
        if skill.error is not None:
            continue
        tool_names = [_resolve(t, by_name) for t in skill.tools]
        schema = parameters(skill.args)
        if not skill.args:
            schema["required"] = ["task"]  # a Markdown skill has only its task
        registry.register(skill.tool_name, skill.description or f"Run the {skill.name} skill",
                          schema, _skill_runner(skill, registry, tool_names, make_loop, default_model))
        registered.append(skill.tool_name)
    return registered


def _resolve(tool: str, skills: dict[str, Skill]) -> str:
    """Seed 001: a skill's tool list may name another skill plainly ("analyze" → "skill_analyze")."""
    return f"skill_{tool}" if tool in skills else tool


def _skill_deps(skill: Skill, skills: dict[str, Skill]) -> list[str]:
    return [name for t in skill.tools if (name := t.removeprefix("skill_")) in skills]


def refuse_cycles(skills: dict[str, Skill]) -> None:
    """Mark skills on a cycle, and skills that use an unusable skill, as broken (with the reason)."""
    state: dict[str, str] = {}  # "visiting" | "done"

    def visit(name: str, path: list[str]) -> None:
        state[name] = "visiting"
        skill = skills[name]
        for dep in _skill_deps(skill, skills):
            if state.get(dep) == "visiting":
                cycle = [*path[path.index(dep):], dep]
                for member in cycle[:-1]:
                    skills[member].error = "skill cycle refused: " + " → ".join(cycle)
            elif dep not in state:
                visit(dep, [*path, dep])
            if skill.error is None and skills[dep].error is not None:
                skill.error = f"uses skill {dep!r}, which is unavailable"
        state[name] = "done"

    for name in skills:
        if name not in state:
            visit(name, [name])


def _skill_runner(skill: Skill, registry: ToolRegistry, tool_names: list[str], make_loop: MakeLoop,
                  default_model: str) -> Callable[..., Any]:
    model = skill.model or default_model
    system = f"{LANGUAGE_LEAD_IN}\n\n{skill.body}"

    async def run_skill(ctx: ToolContext, task: str = "", **args: Any) -> str:
        chain = (*ctx.skill_chain, skill.name)
        if len(chain) > MAX_DEPTH:
            return f"Error: skill {skill.name!r} not run: skills may nest at most {MAX_DEPTH} levels deep."
        if skill.name in chain[:-1]:
            return f"Error: skill {skill.name!r} not run: it is already running in this chain."
        if not isinstance(task, str) or (not task.strip() and not args):
            return "Error: 'task' must say what the skill should do"
        if problem := await check_inputs(skill.args, args, ctx):
            return problem
        nested = dataclasses.replace(ctx, skill_chain=chain)
        loop = make_loop(registry.subset(tool_names), model, skill.max_turns)
        request = await _request(skill, ctx, task, args)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": request}]
        outcome = f"Error: skill {skill.name!r} ended without an answer."
        async for event in loop.run(messages, nested):  # drained to the end so the run closes cleanly
            if isinstance(event, RunFinished):
                outcome = event.text or "(the skill finished without text)"
            elif isinstance(event, RunFailed):
                outcome = f"Error: skill {skill.name!r} failed ({event.kind}, error id {event.error_id})."
        return outcome

    return run_skill


async def _request(skill: Skill, ctx: ToolContext, task: str, args: dict[str, Any]) -> str:
    """What the nested agent is asked: the task, the checked arguments, and where to write its files."""
    lines = [task.strip()] if task.strip() else []
    lines += [f"{name}: {value}" for name, value in args.items()]
    if skill.output_dir is not None:
        folder = await output_folder(ctx, skill.output_dir)
        lines.append(f"Write any files you make into the folder {folder}/ of this chat's folder.")
    return "\n".join(lines)
