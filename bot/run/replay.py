"""Replays: a stored answer's run again — the same history up to its question, the model it had or another —
with the tool results the tree recorded on its path instead of calling the tools (unless asked to call them).

The replayed steps are stored as a side branch under the question, the answer marked as a replay, and the
cursor stays where it was: a replay is for looking, not for moving on. The command (bot/commands/replay.py)
shows what changed against the original.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

from bot.agent.events import ReasoningDelta, RunFinished, StepMessage, TextDelta
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.chats.sessions import Session
from bot.delivery import Delivery, StreamWriter
from bot.i18n import t
from bot.replies import Feedback
from bot.run.runner import AgentRunner
from bot.run.turn import TurnContext
from bot.store.traces import Trace
from bot.tree.model import Conversation, Message


@dataclass(frozen=True, slots=True)
class Recorded:
    tool: str
    arguments: str
    result: str


def recorded_calls(steps: list[Message]) -> list[Recorded]:
    """The tool calls between a question and its answer, each with the result stored for it."""
    results = {m.tool_call_id: m.content for m in steps if m.role == "tool" and m.tool_call_id}
    return [Recorded(str(fn.get("name", "")), str(fn.get("arguments", "")), results[str(call.get("id"))])
            for m in steps if m.role == "assistant" and m.tool_calls
            for call in m.tool_calls if str(call.get("id")) in results
            for fn in [call.get("function") or {}]]


def is_answer(m: Message | None) -> bool:
    """A complete answer: the assistant's last word of a run (no tool calls, not cut short)."""
    return m is not None and m.role == "assistant" and not m.tool_calls and not m.interrupted


def stored_run(conv: Conversation, answer: Message) -> tuple[list[Message], list[Recorded]] | None:
    """The branch up to the question `answer` answers (root excluded), and the tool calls recorded in between;
    None for a message that is no complete answer to a question."""
    chain = conv.get_message_chain(answer.id)[1:] if is_answer(answer) else []
    asked = next((i for i in range(len(chain) - 1, -1, -1) if chain[i].role == "user"), None)
    return None if asked is None else (chain[: asked + 1], recorded_calls(chain[asked + 1 : -1]))


class RecordedTools(ToolRegistry):
    """The tools as the model saw them, answered from the record: a call gets the result stored for the same tool
    and arguments (else the next unused one of that tool); nothing runs."""

    def __init__(self, real: ToolRegistry, recorded: list[Recorded]) -> None:
        super().__init__()
        for tool in real.tools:
            self.register(tool.name, tool.description, tool.parameters, tool.func, tool.needs_approval)
        self._left = list(recorded)
        self.missed = 0  # calls the record had no result for

    async def execute(self, name: str, arguments: str, ctx: ToolContext) -> str:
        same = [r for r in self._left if r.tool == name and _same_arguments(r.arguments, arguments)]
        found = (same or [r for r in self._left if r.tool == name])[:1]
        if not found:
            self.missed += 1
            return f"Error: this replay has no recorded result for this {name} call (tools are not called)"
        self._left.remove(found[0])
        return found[0].result


def _same_arguments(a: str, b: str) -> bool:
    try:
        return bool(json.loads(a or "{}") == json.loads(b or "{}"))
    except ValueError:
        return a == b


@dataclass
class Replayed:
    text: str  # the replayed answer ("" when the run failed)
    trace: Trace
    missed: int = 0  # tool calls the record could not answer
    stored: list[Message] = field(default_factory=list)


class Replays:
    def __init__(self, runner: AgentRunner) -> None:
        self.runner = runner

    async def run(self, session: Session, turn: TurnContext, delivery: Delivery | None, path: list[Message],
                  recorded: list[Recorded] | None, model: str, head: str) -> Replayed:
        """Answer `path` (ending in the question) again with `model`; `recorded` None: the tools are called. With
        a delivery the replay is shown and stored; without one (`bothub replay`) it is only compared."""
        runner, question = self.runner, path[-1]
        tools = None if recorded is None else RecordedTools(runner.loop.tools, recorded)
        turns = runner.model_turns if tools is None else runner.turns_with(tools)
        view = dataclasses.replace(session, path=path)
        trace = runner.tracer.start(session.key.storage_key, session.conversation_id, model)
        stream = StreamWriter(delivery, turn.chat, title=head) if delivery is not None else None
        ctx = (runner.tool_context(view, turn, delivery, model) if delivery is not None
               else ToolContext(view.key.storage_key, runner.workdir(view), turn.user_id, lang=turn.lang))
        steps: list[Message] = []
        text = ""
        try:
            prompt = await runner.assembly.prompt(view, turn, trace)
            async for event in turns.events(view, prompt, ctx, model, trace):
                trace.observe(event)
                if isinstance(event, TextDelta | ReasoningDelta) and stream is not None:
                    (stream.feed if isinstance(event, TextDelta) else stream.feed_reasoning)(event.text)
                elif isinstance(event, StepMessage):
                    parent = steps[-1].id if steps else question.id
                    steps.append(Message.new(event.role, event.content, parent_id=parent, tool_calls=event.tool_calls,
                                             tool_call_id=event.tool_call_id, trace_id=trace.id))
                elif isinstance(event, RunFinished):
                    text = event.text
        finally:
            runner.tracer.finish(trace)
        if stream is None:
            return Replayed(text, trace.trace(), tools.missed if tools else 0)
        feedback = None
        if text and steps and delivery is not None and delivery.caps.feedback and session.conversation_id:
            feedback = Feedback(session.conversation_id, steps[-1].id)  # a replay is an answer to rate too
        await stream.finish(text or t(turn.lang, "replay_failed"), feedback=feedback)
        if text and steps:
            steps[-1].content = f"{head}\n\n{steps[-1].content}"  # marked in the tree as a replay
            cursor = session.cursor
            assert cursor is not None
            await runner.conversations.branch_off(session, steps, cursor)
        return Replayed(text, trace.trace(), tools.missed if tools else 0, steps if text else [])
