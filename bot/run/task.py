"""A background task's run: a sub-agent answering its prompt on a side branch of the conversation that started it.

The branch hangs under the message the task was started at: the task's prompt first, then every step of the
sub-agent as it comes, written beside the conversation without moving its cursor (`Session.aside`), each with
the run's trace id, so /tree and the dashboard show the branch and its trace. The sub-agent has the tools the
task names (never `delegate`: no tasks of tasks), its own role and model. Its progress is one message in the
chat, edited in place at the platform's pace (`StreamWriter.show`).
"""

from __future__ import annotations

import asyncio
import time

from bot.agent.events import RunFailed, RunFinished, StepMessage, ToolStarted
from bot.agent.tools.delegate import NAME as DELEGATE
from bot.chats.sessions import Session
from bot.delivery import Delivery, StreamWriter
from bot.i18n import t
from bot.run.persist import Transcript
from bot.run.runner import AgentRunner
from bot.run.turn import TurnContext
from bot.store.tasks import Task, TaskState


class Progress:
    """The task's one message in the chat: a status line edited in place, paced like a streamed answer."""

    def __init__(self, stream: StreamWriter, task: Task) -> None:
        self._stream = stream
        self._task = task
        self._started = time.monotonic()
        self.steps = 0

    def _line(self, key: str, **values: object) -> str:
        spec = self._task.spec
        return t(spec.lang, key, id=self._task.label, prompt=self._task.headline, steps=self.steps,
                 seconds=round(time.monotonic() - self._started), **values)

    def step(self, tool: str) -> None:
        self.steps += 1
        self._stream.show(self._line("task_step", tool=tool))

    async def end(self, state: TaskState) -> None:
        await self._stream.finish(self._line(f"task_{state}"))


class SubAgent:
    """Runs one task with an agent's runner; the result is its answer (or why there is none)."""

    def __init__(self, runner: AgentRunner) -> None:
        self.runner = runner

    async def run(self, task: Task, view: Session, delivery: Delivery, progress: Progress) -> tuple[TaskState, str]:
        """Answer the task on `view` (its side branch, ending in its prompt); each step is stored as it comes."""
        runner, spec = self.runner, task.spec
        tools = runner.loop.tools
        await tools.refresh()  # MCP servers' tools, found on a first run, are the sub-agent's to choose from too
        names = [n for n in (spec.tools if spec.tools is not None else tools.names) if n != DELEGATE]
        turns = runner.turns_with(tools.subset(names))
        model = spec.model or view.settings.model or None
        turn = TurnContext(spec.where, spec.user_id, spec.user_name, spec.prompt, False, spec.lang,
                           view.conversation_id)
        trace = runner.tracer.start(view.key.storage_key, view.conversation_id, model or runner.loop.model)
        transcript = Transcript(runner.conversations, view, turn, trace.id)
        state: TaskState = "failed"
        result = t(spec.lang, "task_no_answer")
        try:
            async with asyncio.timeout(runner.cfg.llm.run_deadline):
                prompt = await runner.assembly.prompt(view, turn, trace)
                ctx = runner.tool_context(view, turn, delivery, model or runner.loop.model)
                async for event in turns.events(view, prompt, ctx, model, trace):
                    trace.observe(event)
                    if isinstance(event, StepMessage):
                        transcript.step(event)
                    elif isinstance(event, ToolStarted):
                        progress.step(event.name)
                    elif isinstance(event, RunFinished):
                        state, result = "done", event.text or t(spec.lang, "empty_answer")
                    elif isinstance(event, RunFailed):
                        result = t(spec.lang, "task_model_failed", reason=t(spec.lang, event.kind.reason),
                                   error_id=event.error_id)
        except TimeoutError:
            trace.outcome = "deadline"
            result = t(spec.lang, "task_deadline")
        finally:
            transcript.close(False)
            runner.tracer.finish(trace)
        try:
            await transcript.flush(None)
        except KeyError:  # its conversation was deleted meanwhile: the result is still posted, kept nowhere
            if await runner.conversations.store.get(view.key.storage_key, view.conversation_id or "") is not None:
                raise
        return state, result
