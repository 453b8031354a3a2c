"""What commands may use, built once by the composition root: commands never see the Hub.

Keeping this narrow is what keeps `bot/commands` below the hub in the import graph, and lets a
command be tested with a store, a prompt builder and a session, without starting anything else.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from bot.agent.approvals import Approvals
from bot.agent.compaction import Compactor
from bot.agent.memory import Memory
from bot.agent.prompt import PromptBuilder
from bot.agent.skill_sources import workspace_skills
from bot.agent.tools.mcp import McpTools
from bot.agent.tools.registry import ToolRegistry
from bot.agent.trace import TraceWriter
from bot.agent.usage import UsageLedger
from bot.chats.conversations import Conversations
from bot.chats.forgetting import Forgetting
from bot.chats.handoff import Handoffs
from bot.chats.housekeeping import Housekeeping
from bot.chats.pairing import Pairing
from bot.chats.sessions import Session
from bot.lanes import Lanes
from bot.llmconfig import LLMConfig
from bot.ops.metrics import Metrics
from bot.scheduler.service import Schedules
from bot.store import Store
from bot.store.tasks import NewTask, Task
from bot.tree.model import Message

if TYPE_CHECKING:
    from bot.run.replay import Recorded, Replayed


@dataclass(frozen=True, slots=True)
class CommandServices:
    conversations: Conversations  # new, switch, cursor moves and trees of one session's chat
    store: Store  # read-only listings scoped by chat (conversations, memories) and chat settings
    prompts: PromptBuilder  # roles, skills and workspace reloads
    memory: Memory
    approvals: Approvals
    pairing: Pairing
    lanes: Lanes  # the one door into a chat's lane: /stop interrupts it, the dashboard's actions run there
    llm: LLMConfig  # default and allowed models
    tools: ToolRegistry  # what /tools lists
    mcp: McpTools  # MCP servers' state for /tools
    compactor: Compactor  # branch summaries: /compact, /tree, /status
    housekeeping: Housekeeping  # rename, archive, delete and undo, search
    schedules: Schedules | None = None  # None when scheduling is turned off
    usage: UsageLedger | None = None  # /usage; None: not recorded (embedded uses without a store of it)
    handoffs: Handoffs | None = None  # /handoff, /resume; None: not offered
    forgetting: Forgetting | None = None  # /forget-me; None: not offered
    traces: TraceWriter | None = None  # /tree names the models of an answer that failed over
    metrics: Metrics | None = None  # duel votes and win rates for /metrics
    tasks: TaskControl | None = None  # /task, /tasks, /cancel t<n>; None: background tasks are not offered

    async def set_setting(self, session: Session, **values: str) -> None:
        """Persist a per-chat choice and apply it to the live session at once."""
        session.settings = await self.store.settings.update(session.key.storage_key, **values)

    async def reload_workspace(self) -> None:
        """Re-read SOUL.md, roles and skills off the event loop (seed 000: edits apply on /new)."""
        prompts = self.prompts

        def load() -> None:
            prompts.reload(workspace_skills(prompts.workspace))

        await asyncio.to_thread(load)


class TaskControl(Protocol):
    """Background tasks of a chat (bot/hub/tasks.py makes them)."""

    limit: int  # running at once per chat

    async def start(self, spec: NewTask) -> Task:
        """Store the task and start it (TooManyTasks at the chat's limit)."""
        ...

    async def cancel(self, chat: str, task_id: int) -> Task | None:
        """Cancel the chat's task if it runs; the task as it was, None if the chat has no such task."""
        ...

    async def recent(self, chat: str) -> list[Task]: ...


class Rerun(Protocol):
    """Runs a command starts in its own chat, in the lane the command already holds (the hub makes them)."""

    async def again(self, text: str, model: str | None = None) -> None:
        """Answer `text` again from the session's cursor (/retry), with `model` for this turn when named."""
        ...

    @property
    def agents(self) -> list[str]:
        """The agents a duel may name besides models (each answers with its own workspace and model)."""
        ...

    async def duel(self, path: list[Message], names: list[str]) -> None:
        """Answer the last message of `path` (a branch of this session) with each model or agent at once (/duel)."""
        ...

    async def replay(self, path: list[Message], recorded: list[Recorded] | None, model: str, head: str) -> Replayed:
        """Answer the last message of `path` again with `model`, the tools answered from `recorded` (None: called),
        shown headed `head` and stored as a side branch (/replay)."""
        ...
