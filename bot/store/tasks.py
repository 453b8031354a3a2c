"""Background tasks (sub-agents): one row per task, and its run waiting in the chat's inbox.

A task is started by the `delegate` tool or `/task`: its row and an inbox entry of its chat are stored in one
transaction, so the run survives a restart or a replica's death like any accepted message (the chat's owner
runs it). The entry stays until the result is posted back into the conversation that started the task; the
row's state says how far it got: `running` (run it, again after a crash), `done` or `failed` (its result is
stored: post it), `cancelled` (nothing more to do).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from bot.messages import ChatRef

TaskState = Literal["running", "done", "failed", "cancelled"]
HEADLINE = 60  # characters of a task's prompt where it is named


@dataclass(frozen=True, slots=True)
class NewTask:
    chat: str  # the chat's storage key
    conversation_id: str  # the conversation that started it: its result goes there
    parent_id: str  # the message its side branch hangs under
    prompt: str
    where: ChatRef  # where progress and the result are shown
    user_id: str
    user_name: str
    lang: str
    role: str = ""  # "": the conversation's role
    model: str = ""  # "": the chat's model
    tools: tuple[str, ...] | None = None  # None: the starting agent's tools (delegate itself excepted)


@dataclass(frozen=True, slots=True)
class Task:
    id: int
    spec: NewTask
    state: TaskState
    result: str  # the sub-agent's answer (or why it failed), once ended
    branch_id: str  # the task's own first message (its prompt) in the tree, once stored
    progress_id: str  # the platform message that shows its progress, once sent
    created_at: datetime
    finished_at: datetime | None = None

    @property
    def headline(self) -> str:
        """The prompt on one short line (progress, /tasks, the posted result)."""
        line = " ".join(self.spec.prompt.split())
        return line if len(line) <= HEADLINE else line[: HEADLINE - 1] + "…"

    @property
    def label(self) -> str:
        """How people name it (`/cancel t3`): job ids are bare numbers, task ids are not."""
        return f"t{self.id}"


def task_event(task_id: int) -> str:
    """The inbox entry's event for a task's run."""
    return json.dumps({"task": task_id})


def task_of(event: str) -> int | None:
    """The task an inbox entry runs, or None for any other entry (a message)."""
    if not event.startswith('{"task":'):
        return None
    value = json.loads(event).get("task")
    return value if isinstance(value, int) else None


def parse_label(text: str) -> int | None:
    """`t3` (or `T3`) → 3; anything else → None."""
    text = text.strip().lower()
    return int(text[1:]) if text[:1] == "t" and text[1:].isdecimal() and len(text) < 12 else None


def where_json(where: ChatRef) -> str:
    return json.dumps([where.platform, where.chat_id, where.thread_id, where.is_group, where.identity])


def where_of(text: str) -> ChatRef:
    platform, chat_id, thread_id, is_group, identity = json.loads(text)
    return ChatRef(platform, chat_id, thread_id, bool(is_group), identity=identity)


def tools_json(tools: tuple[str, ...] | None) -> str | None:
    return json.dumps(list(tools)) if tools is not None else None


def tools_of(text: str | None) -> tuple[str, ...] | None:
    return tuple(json.loads(text)) if text is not None else None


# the row as both backends store and read it
COLUMNS = ("id, chat, conversation_id, parent_id, prompt, role, model, tools, where_ref, user_id, user_name, lang, "
           "state, result, branch_id, progress_id, created_at, finished_at")


def insert_values(task: NewTask) -> tuple[Any, ...]:
    """A new row's values in COLUMNS' order from `chat` to `lang`."""
    return (task.chat, task.conversation_id, task.parent_id, task.prompt, task.role, task.model,
            tools_json(task.tools), where_json(task.where), task.user_id, task.user_name, task.lang)


def task_row(row: Sequence[Any]) -> Task:
    """A row in COLUMNS' order (SQLite gives times as ISO text, PostgreSQL as datetimes)."""
    (tid, chat, conv, parent, prompt, role, model, tools, where, user_id, user_name, lang, state, result, branch,
     progress, created, finished) = row
    spec = NewTask(chat, conv, parent, prompt, where_of(where), user_id, user_name, lang, role, model,
                   tools_of(tools))
    return Task(int(tid), spec, state, result, branch, progress, _time(created), _time(finished) if finished else None)


def _time(value: str | datetime) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


class TooManyTasks(Exception):
    """The chat has as many tasks running as it may (`max_tasks`)."""


class TaskStore(Protocol):
    async def start(self, task: NewTask, limit: int) -> tuple[Task, int]:
        """Store the task as running and queue its run in the chat's inbox, in one transaction (the task and the
        entry's id); TooManyTasks when the chat has `limit` running already."""
        ...

    async def get(self, chat: str, task_id: int) -> Task | None:
        """The chat's task (another chat's id is not found)."""
        ...

    async def recent(self, chat: str, limit: int = 20) -> list[Task]:
        """The chat's tasks, newest first."""
        ...

    async def noted(self, chat: str, task_id: int, *, branch_id: str | None = None,
                    progress_id: str | None = None) -> None:
        """Where the task shows: its first message in the tree, its progress message on the platform."""
        ...

    async def end(self, chat: str, task_id: int, state: TaskState, result: str = "") -> bool:
        """A running task ends (`done`, `failed` with its result, or `cancelled`); False when it had ended."""
        ...
