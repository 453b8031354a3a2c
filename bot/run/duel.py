"""Duels: the last question answered by several models at once, each answer a sibling branch under it.

Every contender streams into a platform message of its own, headed with its model, all at the same time (the
chat's pacing shares its budget between them); tools are off, so the answers differ by model alone and nothing
runs twice. Once all have ended, the answers are stored in one write as children of the question (the shape
/retry gives: the question once, the answers side by side in /tree), the cursor goes to the first, the duel is
recorded (bot/store/votes.py) and each message gets its vote button, `/vote <N>` with the answer's number.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from dataclasses import dataclass
from secrets import token_hex

from bot.agent.events import ReasoningDelta, RunFailed, RunFinished, TextDelta
from bot.agent.tools.registry import ToolRegistry
from bot.chats.sessions import Session
from bot.delivery import Delivery, StreamWriter
from bot.i18n import t
from bot.replies import Button, Reply
from bot.run.runner import AgentRunner
from bot.run.turn import TurnContext
from bot.store.votes import Entry, VoteStore
from bot.tree.model import Message

MAX_CONTENDERS = 4  # answers of one duel: each is a model request and a message in the chat


@dataclass
class Contender:
    model: str
    stream: StreamWriter
    text: str = ""  # the whole answer, once finished
    shown: str = ""  # what has streamed so far
    trace_id: str = ""
    answered: bool = False  # the model finished (else it failed, or passed the deadline)
    message: Message | None = None  # the stored answer


def question_path(session: Session) -> list[Message] | None:
    """The branch up to the last question on it (the user message a duel answers again), or None."""
    at = next((i for i in range(len(session.path) - 1, -1, -1) if session.path[i].role == "user"), None)
    return None if at is None else session.path[: at + 1]


class Duels:
    def __init__(self, runner: AgentRunner, votes: VoteStore) -> None:
        self.runner = runner
        self.votes = votes
        self.turns = runner.turns_with(ToolRegistry())  # tools off: none offered

    async def run(self, session: Session, turn: TurnContext, delivery: Delivery, path: list[Message],
                  models: list[str]) -> None:
        """Answer `path`'s last message with each model, side by side, and store the answers as its children."""
        question = path[-1]
        await delivery.send(turn.chat, Reply(t(turn.lang, "duel_start", models=" · ".join(models))))
        view = dataclasses.replace(session, path=path)  # the history each contender reads; the session stays
        contenders = [Contender(model, StreamWriter(delivery, turn.chat, title=self._title(turn, i, model),
                                                    sharing=len(models)))
                      for i, model in enumerate(models, 1)]
        try:
            await asyncio.gather(*(self._contend(view, turn, delivery, c) for c in contenders))
        except asyncio.CancelledError:  # /stop or shutdown: each message keeps what it showed, nothing is stored
            await asyncio.shield(self._cut(turn, contenders))
            raise
        answers = [c for c in contenders if c.answered]
        for c in answers:
            c.message = Message.new("assistant", c.text, parent_id=question.id, trace_id=c.trace_id)
        if answers:
            stored = [c.message for c in answers if c.message is not None]
            await self.runner.conversations.branch_off(session, stored, stored[0].id)
            assert session.conversation_id is not None
            await self.votes.entered(session.key.storage_key, session.conversation_id, token_hex(8),
                                     [Entry(m.id, c.model) for c, m in zip(answers, stored, strict=True)])
        for i, c in enumerate(contenders, 1):
            await self._close(turn, c, i)

    @staticmethod
    def _title(turn: TurnContext, i: int, model: str) -> str:
        return t(turn.lang, "duel_title", i=i, model=model)

    async def _contend(self, view: Session, turn: TurnContext, delivery: Delivery, c: Contender) -> None:
        """One model's answer, streamed into its own message; its trace is stored like any run's."""
        runner = self.runner
        trace = runner.tracer.start(view.key.storage_key, view.conversation_id, c.model)
        c.trace_id, started = trace.id, time.monotonic()
        try:
            async with asyncio.timeout(runner.cfg.llm.run_deadline):
                prompt = await runner.assembly.prompt(view, turn, trace)
                tools = runner.tool_context(view, turn, delivery, c.model)
                async for event in self.turns.events(view, prompt, tools, c.model, trace):
                    trace.observe(event)
                    if isinstance(event, TextDelta):
                        c.shown += event.text
                        c.stream.feed(event.text)
                    elif isinstance(event, ReasoningDelta):
                        c.stream.feed_reasoning(event.text)
                    elif isinstance(event, RunFinished):
                        c.text, c.answered = event.text, True
                    elif isinstance(event, RunFailed):
                        runner.metrics.error(event.kind, event.error_id, view.key.storage_key, trace.id)
        except TimeoutError:
            trace.outcome = "deadline"
        finally:
            runner.metrics.run_finished("ok" if c.answered else "failed", time.monotonic() - started)
            runner.tracer.finish(trace)

    @staticmethod
    async def _cut(turn: TurnContext, contenders: list[Contender]) -> None:
        note = t(turn.lang, "interrupted")
        for c in contenders:
            with contextlib.suppress(Exception):
                await c.stream.finish(f"{c.shown}\n\n{note}" if c.shown.strip() else note)

    async def _close(self, turn: TurnContext, c: Contender, i: int) -> None:
        """The answer's final edit, with its vote button; a failed contender says so instead."""
        if c.message is None or c.message.number is None:
            await c.stream.finish(t(turn.lang, "duel_failed", model=c.model))
            return
        n = c.message.number
        vote = Button(t(turn.lang, "duel_vote", i=i, n=n), f"/vote {n}")
        await c.stream.finish(c.text or t(turn.lang, "empty_answer"), buttons=((vote,),))
