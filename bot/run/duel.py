"""Duels: the last question answered by several models or agents at once, each answer a sibling branch under it.

A model answers as the chat's agent; an agent's name answers with that agent's workspace (its prompt) and model.

All contenders stream at the same time, each headed with its model: side by side in one message where the
platform shows columns (Capabilities.columns: one card, one web-chat message; bot/delivery/columns.py), else each
into a platform message of its own (the chat's pacing shares its budget between them). Tools are off, so the
answers differ by model alone and nothing runs twice; meanwhile the cheaper model gives the question a topic tag
(bot/agent/topics.py). Once all have ended, the answers are stored in one write as children of the question (the
shape /retry gives: the question once, the answers side by side in /tree), the cursor goes to the first, the duel
is recorded with its agent and tag (bot/store/votes.py) and each answer gets its vote button, `/vote <N>` with
the answer's number.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from secrets import token_hex
from typing import Protocol

from bot.agent.events import ReasoningDelta, RunFailed, RunFinished, TextDelta
from bot.agent.tools.registry import ToolRegistry
from bot.agent.topics import Topics
from bot.chats.sessions import Session
from bot.delivery import Delivery, StreamWriter
from bot.delivery.columns import Buttons, ColumnStream
from bot.i18n import t
from bot.messages import ChatRef
from bot.replies import Button, Reply
from bot.run.model import ModelTurns
from bot.run.roster import Roster
from bot.run.runner import AgentRunner
from bot.run.turn import TurnContext
from bot.store.votes import Entry, VoteStore
from bot.tree.model import Message

MAX_CONTENDERS = 4  # answers of one duel: each is a model request and a message in the chat


class Board(Protocol):
    """Where the contenders' answers show while they grow: one message with columns, or a message each."""

    def feed(self, column: int, delta: str) -> None: ...

    def feed_reasoning(self, column: int, delta: str) -> None: ...

    async def finish(self, texts: Sequence[str], buttons: Sequence[Buttons]) -> None: ...


class Separate:
    """Each answer in a message of its own (a platform without columns), all streaming at once."""

    def __init__(self, delivery: Delivery, chat: ChatRef, heads: Sequence[str]) -> None:
        self.streams = [StreamWriter(delivery, chat, title=head, sharing=len(heads)) for head in heads]

    def feed(self, column: int, delta: str) -> None:
        self.streams[column].feed(delta)

    def feed_reasoning(self, column: int, delta: str) -> None:
        self.streams[column].feed_reasoning(delta)

    async def finish(self, texts: Sequence[str], buttons: Sequence[Buttons]) -> None:
        for stream, text, row in zip(self.streams, texts, buttons, strict=True):
            await stream.finish(text, buttons=row)


@dataclass
class Contender:
    name: str  # a model, or an agent (who answers with its own workspace and model)
    column: int
    runner: AgentRunner  # the chat's agent's, or the named agent's
    model: str | None  # asked of the runner's model turns; None: the agent's own
    text: str = ""  # the whole answer, once finished
    shown: str = ""  # what has streamed so far
    trace_id: str = ""
    answered: bool = False  # the model finished (else it failed, or passed the deadline)
    message: Message | None = None  # the stored answer

    @property
    def wrote(self) -> str:
        """The model (or chain) that wrote the answer."""
        return self.model or self.runner.loop.model

    @property
    def agent(self) -> str:
        return self.runner.agent.name if self.runner.agent is not None else ""


def question_path(session: Session) -> list[Message] | None:
    """The branch up to the last question on it (the user message a duel answers again), or None."""
    at = next((i for i in range(len(session.path) - 1, -1, -1) if session.path[i].role == "user"), None)
    return None if at is None else session.path[: at + 1]


class Duels:
    def __init__(self, runner: AgentRunner, votes: VoteStore, roster: Roster | None = None) -> None:
        self.runner = runner
        self.votes = votes
        self.roster = roster  # the agents a duel may name (None: only models)
        self._turns: dict[int, ModelTurns] = {}  # by runner: tools off, none offered
        self.topics = Topics(runner.loop.llm, runner.cfg.llm.skill_model or runner.cfg.llm.chat_model)

    async def run(self, session: Session, turn: TurnContext, delivery: Delivery, path: list[Message],
                  names: list[str]) -> None:
        """Answer `path`'s last message with each model or agent named, side by side, and store the answers as its
        children."""
        question = path[-1]
        heads = [t(turn.lang, "duel_title", i=i, model=name) for i, name in enumerate(names, 1)]
        start = t(turn.lang, "duel_start", models=" · ".join(names))
        board: Board
        if 2 <= len(names) <= delivery.caps.columns:
            board = ColumnStream(delivery, turn.chat, start, heads)
        else:
            await delivery.send(turn.chat, Reply(start))
            board = Separate(delivery, turn.chat, heads)
        view = dataclasses.replace(session, path=path)  # the history each contender reads; the session stays
        contenders = [self._contender(name, i) for i, name in enumerate(names)]
        tagging = asyncio.create_task(self.topics.tag(question.content))
        try:
            try:
                await asyncio.gather(*(self._contend(view, turn, delivery, board, c) for c in contenders))
            except asyncio.CancelledError:  # /stop or shutdown: each answer keeps what it showed, nothing is stored
                await asyncio.shield(self._cut(turn, board, contenders))
                raise
            answers = [c for c in contenders if c.answered]
            for c in answers:
                c.message = Message.new("assistant", c.text, parent_id=question.id, trace_id=c.trace_id)
            stored = [c.message for c in answers if c.message is not None]
            if stored:
                await self.runner.conversations.branch_off(session, stored, stored[0].id)
            finals = [self._final(turn, c) for c in contenders]
            await board.finish([text for text, _ in finals], [buttons for _, buttons in finals])
            topic = await tagging  # mostly there long before: a press waits in the lane until the duel is recorded
        finally:
            tagging.cancel()  # nothing once it is done
        if stored:
            assert session.conversation_id is not None
            await self.votes.entered(session.key.storage_key, session.conversation_id, token_hex(8),
                                     [Entry(m.id, c.wrote, c.agent) for c, m in zip(answers, stored, strict=True)],
                                     topic)

    def _contender(self, name: str, column: int) -> Contender:
        """An agent's name answers as that agent (its workspace and model); any other name is a model of this one."""
        agent = self.roster.runner(name) if self.roster is not None else None
        return Contender(name, column, self.runner, name) if agent is None else Contender(name, column, agent, None)

    def _tools_off(self, runner: AgentRunner) -> ModelTurns:
        if id(runner) not in self._turns:
            self._turns[id(runner)] = runner.turns_with(ToolRegistry())
        return self._turns[id(runner)]

    async def _contend(self, view: Session, turn: TurnContext, delivery: Delivery, board: Board,
                       c: Contender) -> None:
        """One model's answer, streamed into its place on the board; its trace is stored like any run's."""
        runner = c.runner
        trace = runner.tracer.start(view.key.storage_key, view.conversation_id, c.wrote)
        c.trace_id, started = trace.id, time.monotonic()
        try:
            async with asyncio.timeout(runner.cfg.llm.run_deadline):
                prompt = await runner.assembly.prompt(view, turn, trace)
                tools = runner.tool_context(view, turn, delivery, c.wrote)
                async for event in self._tools_off(runner).events(view, prompt, tools, c.model, trace):
                    trace.observe(event)
                    if isinstance(event, TextDelta):
                        c.shown += event.text
                        board.feed(c.column, event.text)
                    elif isinstance(event, ReasoningDelta):
                        board.feed_reasoning(c.column, event.text)
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
    async def _cut(turn: TurnContext, board: Board, contenders: list[Contender]) -> None:
        note = t(turn.lang, "interrupted")
        with contextlib.suppress(Exception):
            await board.finish([f"{c.shown}\n\n{note}" if c.shown.strip() else note for c in contenders],
                               [() for _ in contenders])

    @staticmethod
    def _final(turn: TurnContext, c: Contender) -> tuple[str, Buttons]:
        """The answer's final text, with its vote button; a failed contender says so instead."""
        if c.message is None or c.message.number is None:
            return t(turn.lang, "duel_failed", model=c.name), ()
        n = c.message.number
        vote = Button(t(turn.lang, "duel_vote", i=c.column + 1, n=n), f"/vote {n}")
        return c.text or t(turn.lang, "empty_answer"), ((vote,),)
