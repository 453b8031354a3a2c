"""A run's first step, prompt assembly: the system prompt, the group's overheard talk, and the branch fitted to
the budget as the messages of one model request."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.agent.compaction import BranchView, Compactor
from bot.agent.group_context import GroupContext
from bot.agent.memory import Memory
from bot.agent.prompt import PromptBuilder, answer_dangling_tool_calls, fit_history, join_sections
from bot.agent.tokens import TokenCounter
from bot.agent.tools.registry import ToolRegistry
from bot.agent.trace import RunTrace
from bot.chats.sessions import Session
from bot.config import Config
from bot.media.vision import ImageParts
from bot.messages import ChatRef
from bot.run.turn import TurnContext
from bot.scheduler.service import zone

log = logging.getLogger("bothub.runner")

HISTORY_RESERVE = 1024  # tokens kept free for the answer


@dataclass(frozen=True, slots=True)
class Prompt:
    system: str
    overheard: str | None  # the group's recent un-addressed talk, one block right before the message answered


class PromptAssembly:
    def __init__(self, cfg: Config, tools: ToolRegistry, prompts: PromptBuilder, compactor: Compactor,
                 counter: TokenCounter, memory: Memory | None, group_context: GroupContext | None) -> None:
        self.cfg = cfg
        self.tools = tools
        self.prompts = prompts
        self.compactor = compactor
        self.counter = counter
        self.memory = memory
        self.group_context = group_context
        self.images = ImageParts()

    async def prompt(self, session: Session, turn: TurnContext, trace: RunTrace) -> Prompt:
        """The system prompt (workspace files, role, skills, this chat's memory) and the overheard block."""
        memory = await self.memory.for_prompt(session.key.storage_key) if self.memory else []
        await self.tools.refresh()  # MCP servers start on the first run that needs their tools
        sections = self.prompts.sections(session.role, self.tools.names, memory, turn.user_text)
        trace.prompt(sections, self.counter)
        system = join_sections(sections)
        return Prompt(system, await self._overheard(session, turn.chat, system))

    async def branch(self, session: Session, prompt: Prompt) -> BranchView:
        """The branch to the cursor in the room the prompt leaves: a branch over it is compacted first (its
        oldest part summarized)."""
        assert session.conversation_id is not None
        room = (self.cfg.llm.context_tokens - HISTORY_RESERVE - self.counter.count(prompt.system)
                - self.counter.count(prompt.overheard or ""))
        return await self.compactor.fit(session.key.storage_key, session.conversation_id, session.path, room,
                                        self.counter)

    async def messages(self, view: BranchView, prompt: Prompt, budget: int, model: str | None, workdir: Path,
                       trace: RunTrace) -> list[dict[str, Any]]:
        """One request's messages: the branch trimmed to `budget` from its oldest end, images where the model
        sees them."""
        raw = [m.to_openai() for m in view.recent]
        history = _with_context([*view.head(), *answer_dangling_tool_calls(raw)], prompt.overheard)
        messages = fit_history(prompt.system, history, budget, self.counter, HISTORY_RESERVE)
        trace.history(messages[1:], self.counter)  # before images are added: text is what is estimated
        if (model or self.cfg.llm.chat_model) in self.cfg.llm.vision_models:
            with_images = {id(item): m for item, m in zip(raw, view.recent, strict=True)
                           if any(f.kind == "image" for f in m.files)}
            await self.images.apply(messages, with_images, workdir)
        return messages

    async def _overheard(self, session: Session, chat: ChatRef, system: str) -> str | None:
        """This group chat's (or thread's) recent un-addressed talk as one prompt block, if it keeps any: at most
        half of the room the system prompt and the answer leave, the oldest lines left out first."""
        if self.group_context is None or not chat.is_group or not self.group_context.enabled(chat.platform):
            return None
        try:
            tz = zone(session.settings.timezone or self.cfg.scheduler.timezone)
        except ValueError:
            tz = ZoneInfo("UTC")
        try:
            room = self.cfg.llm.context_tokens - HISTORY_RESERVE - self.counter.count(system)
            return await self.group_context.block(session.key.storage_key, tz, room // 2)
        except Exception:  # the question is answered all the same, without the context
            log.exception("reading the group context of %s failed", session.key.storage_key)
            return None


def _with_context(history: list[dict[str, Any]], overheard: str | None) -> list[dict[str, Any]]:
    """The overheard block goes right before the message being answered: "the discussion above" is above it.
    It is part of this request only, never of the tree."""
    last_user = next((i for i in range(len(history) - 1, -1, -1) if history[i].get("role") == "user"), None)
    if overheard is None or last_user is None:
        return history
    return [*history[:last_user], {"role": "user", "content": overheard}, *history[last_user:]]
