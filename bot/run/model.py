"""A run's second step, the model turn loop: the agent loop's events for one answer, with the one retry the
provider's "context too long" earns."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

from bot.agent.events import AgentEvent, FailureKind, RunFailed, RunFinished, TextDelta, ToolStarted
from bot.agent.loop import AgentLoop
from bot.agent.prompt import estimate_messages
from bot.agent.tokens import TokenCounter
from bot.agent.tools.registry import ToolContext
from bot.agent.trace import RunTrace
from bot.chats.sessions import Session
from bot.ops.metrics import Metrics
from bot.run.prompt import Prompt, PromptAssembly

log = logging.getLogger("bothub.runner")


class ModelTurns:
    def __init__(self, loop: AgentLoop, assembly: PromptAssembly, counter: TokenCounter, metrics: Metrics,
                 context_tokens: int) -> None:
        self.loop = loop
        self.assembly = assembly
        self.counter = counter
        self.metrics = metrics
        self.context_tokens = context_tokens

    async def events(self, session: Session, prompt: Prompt, ctx: ToolContext, model: str | None,
                     trace: RunTrace) -> AsyncIterator[AgentEvent]:
        """The loop's events; "context too long" before any text was shown is retried once with half the budget
        (the retry only trims). A single-request answer also teaches the token counter how the provider counts
        (its `usage`)."""
        started = time.monotonic()
        budget = self.context_tokens
        texted = retried = False
        view = await self.assembly.branch(session, prompt)
        while True:
            messages = await self.assembly.messages(view, prompt, budget, model, ctx.workdir, trace)
            retry = used_tools = False
            thinking = session.settings.thinking  # /think on|off per chat; None: the agent's default
            async for event in self.loop.run(messages, ctx, model=model,
                                             thinking=None if thinking is None else thinking == "on"):
                if isinstance(event, TextDelta) and not texted:
                    texted = True
                    self.metrics.first_text(time.monotonic() - started)
                if isinstance(event, RunFailed) and event.kind is FailureKind.CONTEXT and not texted and not retried:
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
