"""System prompt from the workspace (seed 003 §3) and history fitted to the context window.

Workspace files are read once (and on `reload()`), so building a prompt per message touches no disk.
Priorities: P0 (SOUL, AGENTS, the role) is never cut; P1 (IDENTITY, USER, TOOLS) is cut to its budget
with a visible marker; P2 (memory, then the oldest history) gives way first.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.agent.skills import Skill, SkillSet
from bot.agent.tokens import TokenCounter, estimate_tokens, truncate_to_tokens

P0_FILES = ("SOUL.md", "AGENTS.md")
P1_FILES = ("IDENTITY.md", "USER.md", "TOOLS.md")
MEMORY_FILE = "MEMORY.md"
WORKSPACE_FILES = (*P0_FILES, *P1_FILES, MEMORY_FILE)
DEFAULT_ROLE = "default"
TRIM_MARKER = "[… trimmed]"
HISTORY_NOTE = "Older turns of this conversation were left out to fit the context window."
TOOL_NOT_RUN = "[not run: the answer was interrupted]"
MESSAGE_OVERHEAD = 4  # role and separators the provider adds to every message
_FALLBACK_LANGUAGE = {"en": "English", "zh": "Chinese (中文)"}


def priority(title: str) -> str:
    """A section's priority (above): P0, P1 or P2; "" for the fixed parts (tools, skills, language)."""
    if title == "ROLE" or f"{title}.md" in P0_FILES:
        return "P0"
    if f"{title}.md" in P1_FILES:
        return "P1"
    return "P2" if title == "MEMORY" else ""


def _section(title: str, body: str) -> tuple[str, str]:
    return title, f"[SECTION: {title}]\n{body.strip()}"


def join_sections(sections: Sequence[tuple[str, str]]) -> str:
    """The system prompt from `PromptBuilder.sections`."""
    return _joined(tuple(text for _, text in sections))


@functools.lru_cache(maxsize=64)
def _joined(texts: tuple[str, ...]) -> str:
    """Runs whose sections are the same share one prompt string (most chats: no memories, no skill matched)."""
    return "\n\n".join(texts)


class PromptBuilder:
    def __init__(self, workspace: Path, skills: SkillSet, *, p1_budget_tokens: int = 2000,
                 memory_budget_tokens: int = 800, language: str = "en") -> None:
        self.workspace = workspace
        self.skills = skills
        self.p1_budget_tokens = p1_budget_tokens
        self.memory_budget_tokens = memory_budget_tokens
        self.language = language
        self._files: dict[str, str] = {}
        self._roles: dict[str, str] = {}
        self.reload()

    def reload(self, skills: SkillSet | None = None) -> None:
        """Re-read the workspace (e.g. on /new after an edit); optionally swap in freshly loaded skills."""
        # Built aside and swapped in at the end: other chats keep building prompts while this runs.
        files = {name: text for name in WORKSPACE_FILES if (text := _read(self.workspace / name))}
        files.update(self._trim_p1(files))
        roles_dir = self.workspace / "roles"
        role_files = sorted(roles_dir.glob("*.md")) if roles_dir.is_dir() else []
        roles = {p.stem: text for p in role_files if (text := _read(p))}
        # Sections made once and shared by every prompt until the next reload: runs in flight hold references.
        sections = {name: _section(name.removesuffix(".md"), text) for name, text in files.items()}
        role_sections = {role: _section("ROLE", text) for role, text in roles.items()}
        self._files, self._roles, self._file_sections, self._role_sections = files, roles, sections, role_sections
        self._memory_md_tokens = estimate_tokens(files.get(MEMORY_FILE, ""))
        if skills is not None:
            self.skills = skills

    def roles(self) -> list[str]:
        return list(self._roles)

    def role_text(self, role: str) -> str:
        """The role's instructions; an unknown role falls back to the default one."""
        return self._roles.get(role) or self._roles.get(DEFAULT_ROLE, "")

    def system_prompt(self, role: str, tool_names: Sequence[str], memory: Sequence[str] = (),
                      user_text: str = "") -> str:
        return join_sections(self.sections(role, tool_names, memory, user_text))

    def sections(self, role: str, tool_names: Sequence[str], memory: Sequence[str] = (),
                 user_text: str = "") -> list[tuple[str, str]]:
        """The system prompt as (title, text) parts in order: run traces show each part's size."""
        files = self._file_sections
        parts = [files[n] for n in ("SOUL.md", "IDENTITY.md", "AGENTS.md") if n in files]
        if role_part := self._role_sections.get(role) or self._role_sections.get(DEFAULT_ROLE):
            parts.append(role_part)
        parts += [files[n] for n in ("USER.md", "TOOLS.md") if n in files]
        if tool_names:
            parts.append(_tools_section(tuple(tool_names)))
        if skills := self.skills.prompt_skills(user_text):
            parts.append(_section("SKILLS", "\n\n".join(_render_skill(s) for s in skills)))
        if memory_body := self._memory(memory):
            parts.append(_section("MEMORY", memory_body))
        parts.append(_language_section(self.language))
        return parts

    def _trim_p1(self, files: dict[str, str]) -> dict[str, str]:
        """P1 files in order share one budget; the file that overflows is cut and marked, later ones emptied."""
        left = self.p1_budget_tokens
        trimmed: dict[str, str] = {}
        for name in P1_FILES:
            text = files.get(name)
            if text is None:
                continue
            cost = estimate_tokens(text)
            if cost <= left:
                left -= cost
                continue
            trimmed[name] = f"{truncate_to_tokens(text, left)}\n{TRIM_MARKER}".strip()
            left = 0
        return trimmed

    def _memory(self, entries: Sequence[str]) -> str:
        """This chat's newest entries first within the P2 budget, then the shared MEMORY.md in what is left."""
        left = self.memory_budget_tokens
        kept = 0
        for entry in reversed(entries):
            cost = estimate_tokens(entry) + 2
            if cost > left:
                break
            left -= cost
            kept += 1
        lines: list[str] = []
        if shared := self._files.get(MEMORY_FILE):
            if self._memory_md_tokens > left:
                shared = f"{truncate_to_tokens(shared, left)}\n{TRIM_MARKER}".strip()
            lines.append(shared)
        if len(entries) > kept:
            lines.append(f"[… {len(entries) - kept} older memories left out]")
        if kept:
            lines.append("\n".join(f"- {e}" for e in entries[len(entries) - kept:]))
        return "\n\n".join(lines)


@functools.lru_cache(maxsize=16)
def _tools_section(names: tuple[str, ...]) -> tuple[str, str]:
    return _section("AVAILABLE TOOLS", "You can call these tools: " + ", ".join(names))


@functools.lru_cache(maxsize=4)
def _language_section(language: str) -> tuple[str, str]:
    fallback = _FALLBACK_LANGUAGE.get(language, "English")
    return "LANGUAGE", f"Reply in the language of the user's latest message; if unclear, use {fallback}."


def _render_skill(skill: Skill) -> str:
    if skill.format == "seed003":
        return skill.body  # already headed "# Skill: …" with its own sections
    head = f"### {skill.name}" + (f" — {skill.description}" if skill.description else "")
    return f"{head}\n{skill.body}"


def _read(path: Path) -> str:
    """A workspace file's text; unreadable or missing files count as absent (check_workspace reports them)."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def message_tokens(message: dict[str, Any], counter: TokenCounter) -> int:
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content or "", ensure_ascii=False)
    if message.get("tool_calls"):
        text += json.dumps(message["tool_calls"], ensure_ascii=False)
    return counter.count(text) + MESSAGE_OVERHEAD


def answer_dangling_tool_calls(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool calls with no stored result (a run stopped mid-tool) answered as "not run".

    Providers refuse a history in which an assistant's tool call is not followed by its result, so without
    this one /stop at the wrong moment would break the conversation for good.
    """
    out: list[dict[str, Any]] = []
    waiting: list[str] = []
    for message in history:
        if waiting and not (message.get("role") == "tool" and message.get("tool_call_id") in waiting):
            out.extend({"role": "tool", "tool_call_id": cid, "content": TOOL_NOT_RUN} for cid in waiting)
            waiting = []
        if message.get("role") == "tool" and message.get("tool_call_id") in waiting:
            waiting.remove(message["tool_call_id"])
        out.append(message)
        if message.get("tool_calls"):
            waiting = [call.get("id", "") for call in message["tool_calls"]]
    out.extend({"role": "tool", "tool_call_id": cid, "content": TOOL_NOT_RUN} for cid in waiting)
    return out


def estimate_messages(messages: list[dict[str, Any]]) -> int:
    """The raw estimate of a request's messages, to compare with the provider's `usage`."""
    raw = TokenCounter()  # ratio 1.0
    return sum(message_tokens(m, raw) for m in messages)


def _upper_bound(history: list[dict[str, Any]], counter: TokenCounter) -> float:
    """A cheap bound on the history's estimate: no text estimates above one token per character."""
    chars, calls = 0, 0
    for message in history:
        content = message.get("content")
        chars += len(content) if isinstance(content, str) else 0
        if message.get("tool_calls") or not isinstance(content, str | None):
            calls += message_tokens(message, counter)
    return chars * max(counter.ratio, 1.0) + len(history) * (MESSAGE_OVERHEAD + 1) + calls


def fit_history(system: str, history: list[dict[str, Any]], context_tokens: int, counter: TokenCounter,
                reserve: int = 1024) -> list[dict[str, Any]]:
    """[system, …newest history that fits]; a cut happens only before a non-tool message.

    Cutting before a `tool` message could orphan it from the assistant message that called it (the API
    rejects that), so the kept part always starts at a user/assistant message. Walks back from the
    newest message and stops at the budget, so the work is bounded by what is kept. The newest
    complete exchange is kept even when it alone is over budget; the provider then reports it.
    """
    head: dict[str, Any] = {"role": "system", "content": system}
    budget = context_tokens - reserve - counter.count(system) - counter.count(HISTORY_NOTE) - 2 * MESSAGE_OVERHEAD
    if _upper_bound(history, counter) <= budget:
        return [head, *history]  # the usual case, found without estimating each message
    start = len(history)
    used = 0
    for i in range(len(history) - 1, -1, -1):
        used += message_tokens(history[i], counter)
        if used > budget and start < len(history):
            break
        if history[i].get("role") != "tool":
            start = i
            if used > budget:
                break
    if start == 0:
        return [head, *history]
    return [head, {"role": "system", "content": HISTORY_NOTE}, *history[start:]]
