"""One agent turn for a session, step by step: assemble the prompt (prompt.py), run the model's turns
(model.py), persist every step (persist.py), hand the answer to delivery (handoff.py)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

from bot.agent import trace_text
from bot.agent.compaction import Compactor
from bot.agent.events import (
    AgentEvent,
    ModelTurn,
    ReasoningDelta,
    RunFailed,
    RunFinished,
    StepMessage,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from bot.agent.group_context import GroupContext
from bot.agent.loop import AgentLoop
from bot.agent.memory import Memory
from bot.agent.prompt import PromptBuilder
from bot.agent.titles import Titler
from bot.agent.tokens import TokenCounter
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.agent.trace import RunTrace, Tracer
from bot.chats.conversations import Conversations
from bot.chats.folders import chat_folder
from bot.chats.sessions import Session
from bot.config import Config
from bot.delivery import Delivery
from bot.fleet.model import DEFAULT_AGENT, Agent
from bot.i18n import t
from bot.ops.metrics import Metrics
from bot.ops.tracelog import current_trace
from bot.replies import Feedback, Reply
from bot.run.handoff import FailureNotices, ReplyOut
from bot.run.model import ModelTurns
from bot.run.persist import Transcript
from bot.run.prompt import PromptAssembly
from bot.run.turn import TurnContext, user_message
from bot.run.voice import VoiceReplies

log = logging.getLogger("bothub.runner")

End = RunFinished | RunFailed | None  # how the model's turns ended (None: they were cut short)


class AgentRunner:
    def __init__(
        self,
        cfg: Config,
        conversations: Conversations,
        loop: AgentLoop,
        prompts: PromptBuilder,
        compactor: Compactor,
        memory: Memory | None = None,
        metrics: Metrics | None = None,
        group_context: GroupContext | None = None,
        tracer: Tracer | None = None,
        titler: Titler | None = None,
        voice: VoiceReplies | None = None,
        echo_traces: bool = False,
        agent: Agent | None = None,
    ) -> None:
        self.cfg = cfg
        self.agent = agent  # whose workspace, model and tools these are (None: the config's, in embedded uses)
        self.conversations = conversations
        self.compactor = compactor
        self.memory = memory
        self.metrics = metrics or Metrics()
        self.tracer = tracer or Tracer(None)
        self.titler = titler  # None: conversations keep their first message as title
        self.voice = voice  # None: answers are never spoken
        self.echo_traces = echo_traces  # `bothub chat --trace`: each run's trace follows its answer in the chat
        self.loop = loop
        counter = TokenCounter()
        assembly = PromptAssembly(cfg, loop.tools, prompts, compactor, counter, memory, group_context)
        self.assembly = assembly
        self.model_turns = ModelTurns(loop, assembly, counter, self.metrics, cfg.llm.context_tokens)
        self.failures = FailureNotices()

    def turns_with(self, tools: ToolRegistry) -> ModelTurns:
        """This runner's model turns with other tools: a duel's none, a replay's recorded results."""
        loop = self.loop
        other = AgentLoop(loop.llm, tools, loop.model, loop.max_turns, loop.show_thinking, loop.usage, loop.budgets,
                          loop.language)
        return ModelTurns(other, self.assembly, self.model_turns.counter, self.metrics, self.cfg.llm.context_tokens)

    def workdir(self, session: Session) -> Path:
        """Each chat's own folder for file tools."""
        return chat_folder(self.cfg.data_dir, session.key.storage_key)

    async def load(self, session: Session) -> None:
        """Load a session that is not in memory (one store call), then what its prompt reads next to it: the memory
        lines and the conversation's summaries, read afresh like the session (a dropped session may have moved on
        at another replica), together (one wait, not two in a row) and before the user message's write is queued
        ahead of them; both stay cached while the session is used."""
        if session.loaded:
            return
        await self.conversations.ensure(session)
        chat, conv_id = session.key.storage_key, session.conversation_id
        assert conv_id is not None
        self.compactor.drop_cached(chat, conv_id)
        if self.memory is None:
            await self.compactor.summaries(chat, conv_id)
            return
        self.memory.drop_cached(chat)
        await asyncio.gather(self.memory.for_prompt(chat), self.compactor.summaries(chat, conv_id))

    async def answer(self, session: Session, turn: TurnContext, delivery: Delivery) -> None:
        """Store the user's message (the session is loaded), then answer it."""
        self.conversations.add(session, user_message(turn))  # stored while the model is asked; `run` waits
        await self.run(session, turn, delivery)

    async def resume(self, session: Session, turn: TurnContext, delivery: Delivery) -> None:
        """Answer a message accepted earlier or on another replica: if its user message was stored already
        (the latest user message on the path says the same and has no complete answer yet), answer from the
        cursor."""
        at = next((i for i in range(len(session.path) - 1, -1, -1) if session.path[i].role == "user"), None)
        answered = at is not None and any(m.role == "assistant" and not m.tool_calls and not m.interrupted
                                          for m in session.path[at + 1:])  # then it was an earlier, equal message
        if at is not None and not answered and session.path[at].content == user_message(turn).content:
            await self.run(session, turn, delivery)
        else:
            await self.answer(session, turn, delivery)

    async def run(self, session: Session, turn: TurnContext, delivery: Delivery) -> None:
        """Answer from the cursor (a user message) and persist each step.

        Model failures become a polite reply. A run past its deadline ends like /stop: the partial answer
        is kept, marked interrupted. The final answer is delivered outside the deadline, so pacing in a busy
        group can never turn a finished answer into an "interrupted" one.
        """
        model = turn.model or session.settings.model  # /model picks it per chat, /retry <model> for one turn
        trace = self.tracer.start(session.key.storage_key, session.conversation_id, str(model or self.loop.model))
        logged_as = current_trace.set(trace.id)  # every log line of this run names its trace
        try:
            await self._run(session, turn, delivery, trace, str(model) if model else None)
            if self.echo_traces:
                await delivery.send(turn.chat, Reply(trace_text.render(trace.trace()), monospace=True))
        finally:
            log.debug("run ended %s in %s", trace.outcome, session.key.storage_key)
            current_trace.reset(logged_as)
            done = self.tracer.finish(trace)  # stored after the run, in the background
            self.metrics.agents.run(self.agent.name if self.agent else DEFAULT_AGENT,
                                    turn.chat.identity or turn.chat.platform,
                                    done.prompt_tokens + done.completion_tokens, done.cost or 0.0,
                                    done.outcome not in ("ok", "interrupted"),
                                    None if done.ttft_ms is None else done.ttft_ms / 1000)

    async def _run(self, session: Session, turn: TurnContext, delivery: Delivery, trace: RunTrace,
                   model: str | None) -> None:
        prompt = await self.assembly.prompt(session, turn, trace)
        tools = self.tool_context(session, turn, delivery, model or self.loop.model)
        await Transcript.confirm(self.conversations, session)  # a replica fenced off asks no model, shows nothing
        events = self.model_turns.events(session, prompt, tools, model, trace)
        out, transcript = ReplyOut(delivery, turn), Transcript(self.conversations, session, turn, trace.id)
        started, end, delivered = time.monotonic(), None, False
        try:
            try:
                async with asyncio.timeout(self.cfg.llm.run_deadline):
                    end = await self._follow(events, trace, out, transcript)
            except TimeoutError:
                await self._cut("deadline", session, trace, started, out, transcript)
                return
            except asyncio.CancelledError:
                await self._cut("interrupted", session, trace, started, out, transcript)
                raise
            finally:
                out.stop_typing()
            await self._deliver(end, session, turn, out, delivery, trace.id, self._feedback(session, transcript,
                                                                                              delivery))
            delivered = True
        finally:
            finishes = transcript.close(delivered)
        self.metrics.run_finished("ok" if isinstance(end, RunFinished) else "failed", time.monotonic() - started)
        await transcript.flush(finishes)
        if isinstance(end, RunFinished) and turn.silent_reply is None:
            self._title_first_exchange(session, end.text)
            if self.voice is not None and self.voice.wanted(session.settings.voice, turn):
                await self.voice.send(turn, end.text, delivery)

    def tool_context(self, session: Session, turn: TurnContext, delivery: Delivery, model: str) -> ToolContext:
        """What the run's tools may reach: this chat's folder, its asker's rights, the chat itself."""
        return ToolContext(
            chat=session.key.storage_key,
            workdir=self.workdir(session),
            user_id=turn.user_id,
            user_name=turn.user_name,
            is_admin=turn.is_admin,
            is_group=turn.chat.is_group,
            notify=lambda reply: delivery.send(turn.chat, reply),  # approvals ask in this chat
            where=turn.chat,
            conversation_id=session.conversation_id,
            send_file=lambda file: delivery.send_file(turn.chat, file),
            user_text=turn.user_text,
            lang=turn.lang,
            sees_images=model in self.cfg.llm.vision_models,
            anchor=lambda: self._anchor(session),
        )

    async def _anchor(self, session: Session) -> str | None:
        """The newest message of the branch that is no tool call or result (a background task's side branch hangs
        there, so the sub-agent never reads a call left without its result), once stored."""
        await self.conversations.flush(session)
        return next((m.id for m in reversed(session.path) if m.role != "tool" and not m.tool_calls), session.root_id)

    async def _follow(self, events: AsyncIterator[AgentEvent], trace: RunTrace, out: ReplyOut,
                      transcript: Transcript) -> End:
        """Each event to where it goes: text to the chat, steps to the tree, tools to "typing…"."""
        end: End = None
        async for event in events:
            trace.observe(event)
            if isinstance(event, TextDelta):
                transcript.text(event.text)
                out.feed(event.text)
            elif isinstance(event, ReasoningDelta):
                out.reason(event.text)
            elif isinstance(event, StepMessage):
                transcript.step(event)
            elif isinstance(event, ToolStarted | ToolFinished):
                out.tool(isinstance(event, ToolStarted))
                if isinstance(event, ToolStarted):
                    self.metrics.tool_called(event.name)
            elif not isinstance(event, ModelTurn):
                end = event
        return end

    @staticmethod
    def _feedback(session: Session, transcript: Transcript, delivery: Delivery) -> Feedback | None:
        """The 👍/👎 under the answer, naming its node (its id is given before it is shown; stored right after)."""
        if not delivery.caps.feedback or transcript.answer_id is None or session.conversation_id is None:
            return None
        return Feedback(session.conversation_id, transcript.answer_id)

    async def _deliver(self, end: End, session: Session, turn: TurnContext, out: ReplyOut,
                       delivery: Delivery, trace_id: str, feedback: Feedback | None) -> None:
        chat_key = session.key.storage_key
        if isinstance(end, RunFinished):
            self.failures.succeeded(chat_key)
            await out.finish(end.text or t(turn.lang, "empty_answer"), feedback)
        elif isinstance(end, RunFailed):
            self.metrics.error(end.kind, end.error_id, chat_key, trace_id)
            await out.finish()
            await self.failures.report(chat_key, end, turn, delivery)

    async def _cut(self, outcome: str, session: Session, trace: RunTrace, started: float, out: ReplyOut,
                   transcript: Transcript) -> None:
        """A run stopped (/stop, shutdown) or past its deadline keeps and shows what it said so far."""
        trace.outcome = outcome
        if outcome == "deadline":
            self.metrics.error("deadline", chat=session.key.storage_key, trace=trace.id)
            log.warning("run in %s passed its %ss deadline; stopped", session.key.storage_key,
                        self.cfg.llm.run_deadline)
        self.metrics.run_finished(outcome, time.monotonic() - started)
        out.stop_typing()

        async def keep() -> None:
            await transcript.keep_partial()
            await out.cut(transcript.partial)

        await asyncio.shield(keep())

    def _title_first_exchange(self, session: Session, answer: str) -> None:
        """After the answer to a conversation's first message (number 1), ask for a title in the background."""
        question = next((m for m in reversed(session.path) if m.role == "user"), None)
        if self.titler is not None and question is not None and question.number == 1 and session.conversation_id:
            self.titler.request(session.key.storage_key, session.conversation_id, question.content, answer)
