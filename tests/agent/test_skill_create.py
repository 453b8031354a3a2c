"""skill_create: a drafted skill shown to an admin with the approval buttons, saved with its history, used in the
next run and listed by /skills with who asked for it; refused without an admin, denied, or malformed."""

from __future__ import annotations

import json
from pathlib import Path

from bot.agent import skill_create
from bot.agent.approvals import NEEDS_ADMIN, Approvals
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.replies import Reply
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app, wait_for

HAIKU = {"name": "haiku", "description": "Answers as a haiku", "instructions": "Always answer in a haiku."}
COUNTER = {"name": "word-counter", "description": "Counts words", "instructions": "Count the words of the task.",
           "mode": "tool", "tools": ["read_file"]}


async def test_drafted_skill_is_approved_saved_and_used_next_run(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        skills_dir = app.cfg.workspace_dir / "skills"
        fake.script(ToolCalls([("c1", "skill_create", json.dumps(HAIKU))]), Text("saved it"))
        await rec.say("from now on answer in haikus, make that a skill")
        await wait_for(lambda: any(r.buttons for _, r in rec.sent))
        [prompt] = [r for _, r in rec.sent if r.buttons]
        assert "save a new skill 'haiku' (skills/haiku.md)" in prompt.text
        assert "created_by: User u1" in prompt.text and "Always answer in a haiku." in prompt.text
        actions = [b.action for row in prompt.buttons for b in row]
        assert len(actions) == 2 and actions[0].endswith(" once")  # no standing rule for a skill
        assert not (skills_dir / "haiku.md").exists()
        await rec.say(actions[0])
        await wait_for(lambda: "saved it" in rec.texts())
        tool_result = fake.requests[-1]["body"]["messages"][-1]
        assert tool_result["content"] == "Saved skills/haiku.md (prompt skill); it is in use from the next message on."
        assert (skills_dir / "haiku.md").read_text(encoding="utf-8").endswith("Always answer in a haiku.\n")
        assert len(list((skills_dir / ".history" / "haiku").glob("*.md"))) == 1

        await rec.say("hello")
        await app.hub.idle()
        assert "Always answer in a haiku." in fake.requests[-1]["body"]["messages"][0]["content"]

        fake.script(ToolCalls([("c2", "skill_create", json.dumps(COUNTER))]), Text("made a tool"))
        await rec.say("make a word counter tool")
        await wait_for(lambda: len([r for _, r in rec.sent if r.buttons]) == 2)
        second = [r for _, r in rec.sent if r.buttons][-1]
        await rec.say(second.buttons[0][0].action)
        await wait_for(lambda: "made a tool" in rec.texts())
        await rec.say("count these words")
        await app.hub.idle()
        names = [t["function"]["name"] for t in fake.requests[-1]["body"]["tools"]]
        assert "skill_word-counter" in names and names.count("skill_word-counter") == 1
        await rec.say("/skills")
        await app.hub.idle()
        listing = rec.texts()[-1].splitlines()
        assert "[    on] haiku (prompt, workspace, made by User u1) — Answers as a haiku" in listing
        assert "[    on] word-counter (tool, workspace, made by User u1) — Counts words" in listing


async def call(registry: ToolRegistry, ctx: ToolContext, **arguments: object) -> str:
    return await registry.execute("skill_create", json.dumps(arguments), ctx)


async def test_refused_without_an_admin_denied_or_malformed(tmp_path: Path) -> None:
    shown: list[Reply] = []
    approvals = Approvals(default_timeout=5)
    reloads: list[int] = []

    async def notify(reply: Reply) -> None:
        shown.append(reply)
        if reply.buttons:  # the admin presses deny
            approval_id = reply.buttons[-1][0].action.split()[1]
            approvals.decide("test:1", approval_id, None, user_is_admin=True)

    async def reload() -> None:
        reloads.append(1)

    registry = ToolRegistry()
    skill_create.register(registry, tmp_path, approvals, reload)
    ctx = ToolContext(chat="test:1", workdir=tmp_path / "chat", user_id="u9", notify=notify)
    assert await call(registry, ctx, **HAIKU) == (
        "The skill 'haiku' was not saved: only an admin can approve new skills.")
    assert shown[-1].text == NEEDS_ADMIN
    admin = ToolContext(chat="test:1", workdir=tmp_path / "chat", user_id="u1", is_admin=True, notify=notify)
    assert await call(registry, admin, **HAIKU) == "The admin declined to save the skill 'haiku'."
    assert await call(registry, admin, **{**HAIKU, "name": "../up"}) == (
        "Error: 'name' must be letters, digits, '-' or '_', at most 48 characters")
    assert await call(registry, admin, **{**HAIKU, "mode": "daemon"}) == (
        "Error: the draft is not a usable skill: 'mode' must be 'prompt' or 'tool'")
    assert await call(registry, admin, **{**HAIKU, "instructions": "  "}) == (
        "Error: 'instructions' must be 1 to 8000 characters")
    assert not (tmp_path / "skills").exists() and reloads == []
