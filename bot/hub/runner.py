"""One agent turn for a session: build the prompt, run the loop, persist every step, stream the answer."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.agent.compaction import Compactor
from bot.agent.events import (
    AgentEvent,
    ModelTurn,
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
from bot.agent.prompt import PromptBuilder, answer_dangling_tool_calls, estimate_messages, fit_history, join_sections
from bot.agent.titles import Titler
from bot.agent.tokens import TokenCounter
from bot.agent.tools.registry import ToolContext
from bot.agent.trace import RunTrace, Tracer
from bot.chats.conversations import Conversations
from bot.chats.folders import chat_folder
from bot.chats.sessions import Session
from bot.config import Config
from bot.hub.delivery import TYPING_EVERY, Delivery, HeldReply, StreamWriter
from bot.hub.inbox import Ticket
from bot.hub.intake import describe
from bot.i18n import STRINGS, t
from bot.media.vision import ImageParts
from bot.messages import ChatRef
from bot.ops.metrics import Metrics
from bot.ops.tracelog import current_trace
from bot.replies import Button, Reply
from bot.scheduler.service import zone
from bot.tree.model import AttachedFile, Message

log = logging.getLogger("bothub.runner")

TYPING_AFTER = 0.5  # seconds of silence before "typing…": an answer visible sooner saves the platform call
HISTORY_RESERVE = 1024  # tokens kept free for the answer
QUIET_AFTER_FAILURE = 60.0  # seconds during which a chat gets no second "provider failed" message


@dataclass
class TurnContext:
    """Who asked, for tools and prompts; built by the hub from the inbound message."""

    chat: ChatRef
    user_id: str
    user_name: str
    user_text: str
    is_admin: bool
    lang: str
    conversation_id: str | None = None
    job_id: str | None = None  # a scheduled job started this turn: its messages are marked with it
    silent_reply: str | None = None  # an answer of exactly this is not sent (heartbeat: HEARTBEAT_OK)
    files: tuple[AttachedFile, ...] = ()  # what came with the message, already in the chat's folder
    ticket: Ticket | None = None  # the inbox entry this turn answers (none for /retry and scheduled runs)


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
    ) -> None:
        self.cfg = cfg
        self.conversations = conversations
        self.loop = loop
        self.prompts = prompts
        self.compactor = compactor
        self.memory = memory
        self.counter = TokenCounter()
        self.images = ImageParts()
        self._last_failure: dict[str, float] = {}
        self.metrics = metrics or Metrics()
        self.group_context = group_context
        self.tracer = tracer or Tracer(None)
        self.titler = titler  # None: conversations keep their first message as title

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
        self.conversations.add(session, _user_message(turn))  # stored while the model is asked; `run` waits
        await self.run(session, turn, delivery)

    async def resume(self, session: Session, turn: TurnContext, delivery: Delivery) -> None:
        """Answer a message accepted earlier or on another replica: if its user message was stored already
        (the latest user message on the path says the same and has no complete answer yet), answer from the
        cursor."""
        at = next((i for i in range(len(session.path) - 1, -1, -1) if session.path[i].role == "user"), None)
        answered = at is not None and any(m.role == "assistant" and not m.tool_calls and not m.interrupted
                                          for m in session.path[at + 1:])  # then it was an earlier, equal message
        if at is not None and not answered and session.path[at].content == _user_message(turn).content:
            await self.run(session, turn, delivery)
        else:
            await self.answer(session, turn, delivery)

    async def run(self, session: Session, turn: TurnContext, delivery: Delivery) -> None:
        """Answer from the cursor (a user message) and persist each step.

        Model failures become a polite reply. A run past its deadline ends like /stop: the partial answer
        is kept, marked interrupted. The final answer is delivered outside the deadline, so pacing in a busy
        group can never turn a finished answer into an "interrupted" one.
        """
        model = session.settings.model  # /model picks it per chat
        trace = self.tracer.start(session.key.storage_key, session.conversation_id, str(model or self.loop.model))
        logged_as = current_trace.set(trace.id)  # every log line of this run names its trace
        try:
            await self._run(session, turn, delivery, trace, str(model) if model else None)
        finally:
            log.debug("run ended %s in %s", trace.outcome, session.key.storage_key)
            current_trace.reset(logged_as)
            self.tracer.finish(trace)  # stored after the run, in the background

    async def _run(self, session: Session, turn: TurnContext, delivery: Delivery, trace: RunTrace,
                   model: str | None) -> None:
        chat_key = session.key.storage_key
        memory = await self.memory.for_prompt(chat_key) if self.memory else []
        await self.loop.tools.refresh()  # MCP servers start on the first run that needs their tools
        sections = self.prompts.sections(session.role, self.loop.tools.names, memory, turn.user_text)
        trace.prompt(sections, self.counter)
        system = join_sections(sections)
        overheard = await self._overheard(session, turn.chat, system)
        ctx = ToolContext(
            chat=chat_key,
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
        )
        ticket = turn.ticket
        stream: StreamWriter | HeldReply = (
            HeldReply(delivery, turn.chat, turn.silent_reply) if turn.silent_reply
            else StreamWriter(delivery, turn.chat, ticket.replies, ticket.sent) if ticket
            else StreamWriter(delivery, turn.chat))
        typing = TypingIndicator(delivery, turn.chat, stream)
        partial = ""
        stored = asyncio.get_running_loop().create_future()  # the answer's write waits for its delivery
        answered = delivered = False
        started = time.monotonic()
        end: RunFinished | RunFailed | None = None
        try:
            try:
                async with asyncio.timeout(self.cfg.llm.run_deadline):
                    async for event in self._events(session, system, ctx, model, trace, overheard):
                        trace.observe(event)
                        if isinstance(event, TextDelta):
                            partial += event.text
                            stream.feed(event.text)
                        elif isinstance(event, StepMessage):
                            answered = event.role == "assistant" and not event.tool_calls  # RunFinished follows
                            partial = partial if answered else ""
                            self.conversations.add(
                                session, Message.new(event.role, event.content, tool_calls=event.tool_calls,
                                                     tool_call_id=event.tool_call_id, job_id=turn.job_id,
                                                     trace_id=trace.id),
                                stored if answered else None)
                        elif isinstance(event, ToolStarted | ToolFinished):
                            typing.tool_running = isinstance(event, ToolStarted)
                            if isinstance(event, ToolStarted):
                                self.metrics.tool_called(event.name)
                        elif not isinstance(event, ModelTurn):
                            end = event
            except TimeoutError:
                trace.outcome = "deadline"
                self.metrics.error("deadline", chat=chat_key, trace=trace.id)
                self.metrics.run_finished("deadline", time.monotonic() - started)
                log.warning("run in %s passed its %ss deadline; stopped", chat_key, self.cfg.llm.run_deadline)
                typing.cancel()
                await asyncio.shield(self._keep_partial(session, partial, stream, turn, answered, trace.id))
                return
            except asyncio.CancelledError:
                trace.outcome = "interrupted"
                self.metrics.run_finished("interrupted", time.monotonic() - started)
                typing.cancel()
                await asyncio.shield(self._keep_partial(session, partial, stream, turn, answered, trace.id))
                raise
            finally:
                typing.cancel()
            if isinstance(end, RunFinished):
                self._last_failure.pop(chat_key, None)
                await stream.finish(end.text or t(turn.lang, "empty_answer"))
            elif isinstance(end, RunFailed):
                self.metrics.error(end.kind, end.error_id, chat_key, trace.id)
                await stream.finish()
                await self._report_failure(chat_key, end, turn, delivery)
            delivered = True
        finally:  # shown first, stored right after together with the finish of its inbox entry (one round
            # trip); cut short, the answer is stored alone and the hub decides about the entry
            finishes = turn.ticket if delivered and answered else None
            stored.set_result(finishes.entry if finishes else None)
        self.metrics.run_finished("ok" if isinstance(end, RunFinished) else "failed", time.monotonic() - started)
        await self.conversations.flush(session)
        if finishes is not None:
            finishes.finished = True
        if isinstance(end, RunFinished) and turn.silent_reply is None:
            self._title_first_exchange(session, end.text)

    def _title_first_exchange(self, session: Session, answer: str) -> None:
        """After the answer to a conversation's first message (number 1), ask for a title in the background."""
        question = next((m for m in reversed(session.path) if m.role == "user"), None)
        if self.titler is not None and question is not None and question.number == 1 and session.conversation_id:
            self.titler.request(session.key.storage_key, session.conversation_id, question.content, answer)

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

    async def _events(
        self, session: Session, system: str, ctx: ToolContext, model: str | None, trace: RunTrace,
        overheard: str | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """The loop's events; "context too long" before any text was shown is retried once with half the budget.

        A branch over the budget is compacted first (its oldest part summarized); the retry only trims.
        A single-request answer also teaches the token counter how the provider counts (its `usage`).
        """
        started = time.monotonic()
        budget = self.cfg.llm.context_tokens
        texted = retried = False
        assert session.conversation_id is not None
        room = budget - HISTORY_RESERVE - self.counter.count(system) - self.counter.count(overheard or "")
        view = await self.compactor.fit(ctx.chat, session.conversation_id, session.path, room, self.counter)
        while True:
            raw = [m.to_openai() for m in view.recent]
            history = _with_context([*view.head(), *answer_dangling_tool_calls(raw)], overheard)
            messages = fit_history(system, history, budget, self.counter, HISTORY_RESERVE)
            trace.history(messages[1:], self.counter)  # before images are added: text is what is estimated
            if (model or self.cfg.llm.chat_model) in self.cfg.llm.vision_models:
                with_images = {id(item): m for item, m in zip(raw, view.recent, strict=True)
                               if any(f.kind == "image" for f in m.files)}
                await self.images.apply(messages, with_images, ctx.workdir)
            retry = used_tools = False
            async for event in self.loop.run(messages, ctx, model=model):
                if isinstance(event, TextDelta) and not texted:
                    texted = True
                    self.metrics.first_text(time.monotonic() - started)
                if isinstance(event, RunFailed) and event.kind == "context" and not texted and not retried:
                    log.info("context too long in %s; retrying once with half the history budget", ctx.chat)
                    retry = True
                    continue  # the loop ends right after a RunFailed
                used_tools = used_tools or isinstance(event, ToolStarted)
                if isinstance(event, RunFinished) and event.prompt_tokens and not used_tools:
                    self.counter.observe(estimate_messages(messages), event.prompt_tokens)
                yield event
            if not retry:
                return
            retried, budget = True, budget // 2

    async def _keep_partial(
        self, session: Session, partial: str, stream: StreamWriter | HeldReply, turn: TurnContext, answered: bool,
        trace_id: str
    ) -> None:
        """A stopped or timed-out run keeps what was said so far, marked interrupted (a whole answer cut short
        while it was being shown is stored as it is)."""
        note = t(turn.lang, "interrupted")
        if partial.strip() and not answered:
            await self.conversations.append(session, Message.new("assistant", partial, interrupted=True,
                                                                   trace_id=trace_id))
        if turn.silent_reply is not None:
            return  # a run that may stay silent (a heartbeat) does not announce that it was cut short
        with contextlib.suppress(Exception):
            await stream.finish(f"{partial}\n\n{note}" if partial.strip() else note)

    async def _report_failure(self, chat_key: str, event: RunFailed, turn: TurnContext, delivery: Delivery) -> None:
        log.warning("run failed in %s: %s (%s) %s", chat_key, event.kind, event.error_id, event.detail)
        if turn.silent_reply is not None:
            return  # nobody asked for a heartbeat: its failures go to the log, not the chat
        now = time.monotonic()
        last = self._last_failure.get(chat_key)
        self._last_failure[chat_key] = now
        if last is not None and now - last < QUIET_AFTER_FAILURE:
            return
        reason = t(turn.lang, f"reason_{event.kind}" if f"reason_{event.kind}" in STRINGS else "reason_other")
        retry = Button(t(turn.lang, "retry_button"), "/retry")  # one press, where buttons exist
        await delivery.send(turn.chat, Reply(t(turn.lang, "llm_failed", reason=reason, error_id=event.error_id),
                                             buttons=((retry,),)))


class TypingIndicator:
    """Shows "typing…" while the model thinks (nothing visible yet after TYPING_AFTER) or a tool runs."""

    def __init__(self, delivery: Delivery, chat: ChatRef, stream: StreamWriter | HeldReply) -> None:
        self.tool_running = False
        self._task = asyncio.create_task(self._loop(delivery, chat, stream))

    async def _loop(self, delivery: Delivery, chat: ChatRef, stream: StreamWriter | HeldReply) -> None:
        if isinstance(stream, HeldReply):
            return  # a run that may stay silent must not show "typing…" either
        with contextlib.suppress(Exception):
            await asyncio.sleep(TYPING_AFTER)
            while True:
                if not stream.visible or self.tool_running:
                    await delivery.typing(chat)
                await asyncio.sleep(TYPING_EVERY)

    def cancel(self) -> None:
        self._task.cancel()


def _with_context(history: list[dict[str, Any]], overheard: str | None) -> list[dict[str, Any]]:
    """The overheard block goes right before the message being answered: "the discussion above" is above it.
    It is part of this request only, never of the tree."""
    last_user = next((i for i in range(len(history) - 1, -1, -1) if history[i].get("role") == "user"), None)
    if overheard is None or last_user is None:
        return history
    return [*history[:last_user], {"role": "user", "content": overheard}, *history[last_user:]]


def _user_message(turn: TurnContext) -> Message:
    text = "\n".join(part for part in (turn.user_text, describe(turn.files)) if part)  # files named for the model
    if turn.chat.is_group:  # the model must know who is speaking in a shared chat
        return Message.new("user", f"[{turn.user_name}] {text}", author=turn.user_name,
                           job_id=turn.job_id, files=turn.files)
    return Message.new("user", text, job_id=turn.job_id, files=turn.files)
