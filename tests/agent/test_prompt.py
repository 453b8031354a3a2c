"""Prompt assembly (golden outputs at several budgets) and history fitting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.agent.prompt import HISTORY_NOTE, PromptBuilder, fit_history, join_sections
from bot.agent.skills import SkillSet
from bot.agent.tokens import TokenCounter
from bot.agent.tools.registry import ToolRegistry

FILES = {
    "SOUL.md": "I am Soul.",
    "AGENTS.md": "Rules here.",
    "IDENTITY.md": "name: testbot",
    "USER.md": "User likes green tea.\nUser writes Go.",
    "TOOLS.md": "Use tools wisely.",
    "MEMORY.md": "Shared fact.",
    "roles/default.md": "Default role.",
    "roles/coder.md": "Coder role.",
    "skills/brief.md": "---\nname: brief\ndescription: Short answers\n---\nBe brief.\n",
    "skills/off.md": "---\nname: off\nenabled: false\n---\nNever shown.\n",
    "skills/report.md": "# Skill: Report\n\n## 触发条件\n当用户说“周报”时激活。\n\n## 执行步骤\n1. Write it.\n",
}

GOLDEN_FULL = """\
[SECTION: SOUL]
I am Soul.

[SECTION: IDENTITY]
name: testbot

[SECTION: AGENTS]
Rules here.

[SECTION: ROLE]
Coder role.

[SECTION: USER]
User likes green tea.
User writes Go.

[SECTION: TOOLS]
Use tools wisely.

[SECTION: AVAILABLE TOOLS]
You can call these tools: read_file, shell

[SECTION: SKILLS]
### brief — Short answers
Be brief.

[SECTION: MEMORY]
Shared fact.

- likes tea

Reply in the language of the user's latest message; if unclear, use English."""

GOLDEN_TIGHT = """\
[SECTION: SOUL]
I am Soul.

[SECTION: IDENTITY]
name: testbot

[SECTION: AGENTS]
Rules here.

[SECTION: ROLE]
Default role.

[SECTION: USER]
User likes green
[… trimmed]

[SECTION: TOOLS]
[… trimmed]

[SECTION: SKILLS]
### brief — Short answers
Be brief.

# Skill: Report

## 触发条件
当用户说“周报”时激活。

## 执行步骤
1. Write it.

[SECTION: MEMORY]
[… trimmed]

[… 1 older memories left out]

- mid fact two
- new fact three

Reply in the language of the user's latest message; if unclear, use Chinese (中文)."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def builder(workspace: Path, **kwargs: Any) -> PromptBuilder:
    return PromptBuilder(workspace, SkillSet.load(workspace / "skills"), **kwargs)


def test_golden_prompt_with_room_for_everything(workspace: Path) -> None:
    prompt = builder(workspace).system_prompt("coder", ["read_file", "shell"], ["likes tea"], "hello")
    assert prompt == GOLDEN_FULL


def test_golden_prompt_under_tight_budgets(workspace: Path) -> None:
    """P0 and the role intact; P1 cut with the marker in order; memory keeps the newest entries."""
    pb = builder(workspace, p1_budget_tokens=8, memory_budget_tokens=11, language="zh")
    memory = ["old fact one", "mid fact two", "new fact three"]
    assert pb.system_prompt("no-such-role", [], memory, "请写周报") == GOLDEN_TIGHT


def test_p0_survives_a_zero_budget(workspace: Path) -> None:
    prompt = builder(workspace, p1_budget_tokens=0, memory_budget_tokens=0).system_prompt("default", [])
    assert "I am Soul." in prompt and "Rules here." in prompt and "Default role." in prompt
    assert prompt.count("[… trimmed]") == 4  # IDENTITY, USER, TOOLS, MEMORY.md
    assert "testbot" not in prompt and "Shared fact" not in prompt


def test_seed003_skill_only_when_triggered_and_disabled_never(workspace: Path) -> None:
    pb = builder(workspace)
    assert "# Skill: Report" not in pb.system_prompt("default", [], user_text="hello")
    assert "# Skill: Report" in pb.system_prompt("default", [], user_text="帮我写周报")
    assert "Never shown" not in pb.system_prompt("default", [], user_text="周报")


def test_files_are_cached_until_reload(workspace: Path) -> None:
    pb = builder(workspace)
    assert pb.roles() == ["coder", "default"]
    (workspace / "SOUL.md").write_text("I am Soul, edited.", encoding="utf-8")
    (workspace / "roles" / "coder.md").unlink()
    assert "I am Soul.\n" in pb.system_prompt("coder", [])  # no disk read per message
    pb.reload()
    prompt = pb.system_prompt("coder", [])
    assert "I am Soul, edited." in prompt and "Default role." in prompt
    assert pb.roles() == ["default"]


def test_runs_with_the_same_sections_share_one_prompt_string_until_a_reload(workspace: Path) -> None:
    # a thousand runs in flight hold one system prompt, not a thousand copies
    pb = builder(workspace)
    first, second = (join_sections(pb.sections("coder", ["read_file"], [], "hello")) for _ in range(2))
    assert first == second and first is second
    with_memory = join_sections(pb.sections("coder", ["read_file"], ["likes tea"], "hello"))
    assert "likes tea" in with_memory and "likes tea" not in first
    (workspace / "SOUL.md").write_text("I am Soul, edited.", encoding="utf-8")
    pb.reload()
    after = join_sections(pb.sections("coder", ["read_file"], [], "hello"))
    assert "I am Soul, edited." in after and "I am Soul, edited." not in first


def test_the_tool_list_is_built_once_until_a_tool_comes_or_goes() -> None:
    registry = ToolRegistry()

    async def noop(ctx: object) -> str:
        return ""

    registry.register("one", "first", {"type": "object", "properties": {}}, noop)
    specs = registry.get_openai_tools()
    assert registry.get_openai_tools() is specs and [s["function"]["name"] for s in specs] == ["one"]
    registry.register("two", "second", {"type": "object", "properties": {}}, noop)
    assert [s["function"]["name"] for s in registry.get_openai_tools()] == ["one", "two"]
    registry.remove("one")
    assert [s["function"]["name"] for s in registry.get_openai_tools()] == ["two"]


def test_missing_optional_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "SOUL.md").write_text("Only soul.", encoding="utf-8")
    prompt = PromptBuilder(tmp_path, SkillSet.load(tmp_path / "skills")).system_prompt("default", [])
    assert prompt.startswith("[SECTION: SOUL]\nOnly soul.\n\nReply in the language")


# --- history fitting ---------------------------------------------------------------------------

def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}


HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "first question " * 20},
    {"role": "assistant", "content": "first answer " * 20},
    {"role": "user", "content": "read both files"},
    {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
    {"role": "tool", "tool_call_id": "c1", "content": "file one " * 30},
    {"role": "tool", "tool_call_id": "c2", "content": "file two " * 30},
    {"role": "assistant", "content": "both files read"},
    {"role": "user", "content": "thanks"},
]


def _valid_pairs(messages: list[dict[str, Any]]) -> bool:
    called: set[str] = set()
    for m in messages:
        if m.get("tool_calls"):
            called |= {c["id"] for c in m["tool_calls"]}
        if m["role"] == "tool" and m["tool_call_id"] not in called:
            return False
    return True


def test_everything_fits_without_a_note() -> None:
    out = fit_history("SYS", HISTORY, 10_000, TokenCounter(), reserve=100)
    assert out == [{"role": "system", "content": "SYS"}, *HISTORY]


def test_trimming_never_splits_tool_calls_from_results() -> None:
    starts = set()
    for context in range(0, 1200, 5):
        out = fit_history("SYS", HISTORY, context, TokenCounter(), reserve=0)
        assert out[0] == {"role": "system", "content": "SYS"}
        kept = out[2:] if len(out) > 1 and out[1]["content"] == HISTORY_NOTE else out[1:]
        assert kept == HISTORY[len(HISTORY) - len(kept):], "kept part is the newest suffix"
        assert kept[0]["role"] != "tool" and _valid_pairs(kept)
        assert (len(kept) < len(HISTORY)) == (out[1]["content"] == HISTORY_NOTE)
        starts.add(len(HISTORY) - len(kept))
    assert {7, 6, 3, 2, 1, 0} <= starts  # index 3 is the assistant that made the calls
    assert not starts & {4, 5}


def test_newest_turn_is_kept_even_when_over_budget() -> None:
    history = [{"role": "user", "content": "old"}, {"role": "user", "content": "x" * 10_000}]
    out = fit_history("SYS", history, 100, TokenCounter(), reserve=10)
    assert out == [{"role": "system", "content": "SYS"}, {"role": "system", "content": HISTORY_NOTE}, history[1]]


def test_trimming_work_is_bounded_by_what_is_kept() -> None:
    """A 100 000-message history costs only as many estimates as the messages that fit."""

    class CountingCounter(TokenCounter):
        calls = 0

        def count(self, text: str) -> int:
            CountingCounter.calls += 1
            return super().count(text)

    history = [{"role": "user" if i % 2 else "assistant", "content": f"message {i}"} for i in range(100_000)]
    out = fit_history("SYS", history, 200, CountingCounter(), reserve=0)
    assert out[-1] == history[-1] and out[1]["content"] == HISTORY_NOTE
    assert CountingCounter.calls < 40
