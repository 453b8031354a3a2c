"""`skill_create`: the agent drafts a skill from the conversation; an admin approves it with a preview.

The draft is a front-matter Markdown skill, parsed by the same loader as every skill before anyone is asked, so
only a usable file is offered. The admin sees the whole file with the approval buttons (bot/agent/approvals.py);
on approval it goes to the workspace's `skills/`, every approved version is kept in `skills/.history/<name>/`,
`created_by` in the front matter says who asked for it (`/skills` shows it), and the skills are re-read so the
next run has it. A non-admin's request is refused without asking anyone, as for the shell.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import yaml

from bot.agent.approvals import Approvals, Decision
from bot.agent.prompt import PromptBuilder
from bot.agent.skill_sources import workspace_skills
from bot.agent.skill_tools import SkillTools
from bot.agent.skills import NAME_RE, SkillError, parse_skill
from bot.agent.tools.registry import ToolContext, ToolRegistry

HISTORY = ".history"
MAX_BODY = 8000  # characters of instructions in one drafted skill
REFUSED = {
    Decision.DENIED: "The admin declined to save the skill {name!r}.",
    Decision.EXPIRED: "Nobody approved the skill {name!r} in time, so it was not saved.",
    Decision.UNAVAILABLE: "The skill {name!r} was not saved: this chat cannot show an approval.",
    Decision.NOT_ADMIN: "The skill {name!r} was not saved: only an admin can approve new skills.",
}


def draft(name: str, description: str, instructions: str, mode: str, tools: list[str], author: str) -> str:
    """The skill file as it will be saved."""
    meta: dict[str, object] = {"name": name, "description": description.strip(), "mode": mode}
    if tools:
        meta["tools"] = tools
    meta["created_by"] = author
    head = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False)
    return f"---\n{head}---\n{instructions.strip()}\n"


def _save(skills_dir: Path, name: str, text: str) -> Path:
    """Write the live file atomically and a copy into the history; returns the live file."""
    history = skills_dir / HISTORY / name
    history.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    (history / f"{stamp}.md").write_text(text, encoding="utf-8")
    live = skills_dir / f"{name}.md"
    partial = skills_dir / f".{name}.md.partial"
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, live)
    return live


def reloading(prompts: PromptBuilder, skill_tools: SkillTools) -> Callable[[], Awaitable[None]]:
    """Read the workspace's skills afresh into its prompts and its tool skills (off the event loop)."""

    async def reload() -> None:
        skills = await asyncio.to_thread(workspace_skills, prompts.workspace)
        await asyncio.to_thread(prompts.reload, skills)
        skill_tools.register(skills)

    return reload


def register(registry: ToolRegistry, workspace: Path, approvals: Approvals,
             reload: Callable[[], Awaitable[None]]) -> None:
    """`reload` re-reads the workspace's skills (prompts and tool skills) once a new one is saved."""

    async def skill_create(ctx: ToolContext, name: str, description: str, instructions: str,
                           mode: str = "prompt", tools: list[str] | None = None) -> str:
        if not isinstance(name, str) or not NAME_RE.match(name):
            return "Error: 'name' must be letters, digits, '-' or '_', at most 48 characters"
        if not isinstance(instructions, str) or not 1 <= len(instructions.strip()) <= MAX_BODY:
            return f"Error: 'instructions' must be 1 to {MAX_BODY} characters"
        if not isinstance(tools, list | None) or not all(isinstance(t, str) for t in tools or []):
            return "Error: 'tools' must be a list of tool names"
        text = draft(name, str(description), instructions, str(mode), tools or [], ctx.user_name or ctx.user_id)
        skills_dir = workspace / "skills"
        try:
            parse_skill(skills_dir / f"{name}.md", text)
        except SkillError as e:
            return f"Error: the draft is not a usable skill: {e}"
        exists = await asyncio.to_thread((skills_dir / f"{name}.md").exists)
        action = f"{'replace the skill' if exists else 'save a new skill'} {name!r} (skills/{name}.md)"
        decision = await approvals.ask(ctx, text, destructive=False, action=action, kind="skill", keepable=False)
        if decision is not Decision.APPROVED:
            return REFUSED[decision].format(name=name)
        await asyncio.to_thread(_save, skills_dir, name, text)
        await reload()
        kind = f"tool skill_{name}" if mode == "tool" else "prompt skill"
        return f"Saved skills/{name}.md ({kind}); it is in use from the next message on."

    registry.register(
        "skill_create",
        "Save a reusable skill drafted from this conversation (instructions the agent follows for a kind of task). "
        "An admin sees the whole file and approves it first. mode 'prompt': the instructions join the system "
        "prompt; 'tool': a tool skill_<name> that runs them as a sub-agent with the listed tools.",
        {"type": "object", "properties": {
            "name": {"type": "string", "description": "Short name: letters, digits, '-' or '_'"},
            "description": {"type": "string", "description": "One line: what the skill does"},
            "instructions": {"type": "string", "description": "The skill's instructions, in Markdown"},
            "mode": {"type": "string", "enum": ["prompt", "tool"]},
            "tools": {"type": "array", "items": {"type": "string"}, "description": "Tools a tool skill may use"},
        }, "required": ["name", "description", "instructions"]},
        skill_create,
    )
