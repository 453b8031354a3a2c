"""The agent loop (seed 000): model → tools → model … until a plain answer, a failure or the turn limit.

It only streams events; the hub persists each StepMessage into the conversation tree and renders text,
so a run that fails half-way still leaves every tool call and result it made on record.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import AsyncIterator
from secrets import token_hex
from typing import Any

from bot.agent.budgets import Budgets, Hold
from bot.agent.events import (
    AgentEvent,
    FailureKind,
    ModelTurn,
    ReasoningDelta,
    RunFailed,
    RunFinished,
    StepMessage,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from bot.agent.llm import LLMClient
from bot.agent.modelapi import Completion, Failover, ReasoningChunk, TextChunk
from bot.agent.prompt import estimate_messages
from bot.agent.provider import LLMError
from bot.agent.tokens import estimate_tokens
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.agent.usage import UsageLedger, user_key

log = logging.getLogger("bothub.agent")


class AgentLoop:
    def __init__(self, llm: LLMClient, tools: ToolRegistry, model: str, max_turns: int = 30,
                 show_thinking: bool = False, usage: UsageLedger | None = None, budgets: Budgets | None = None,
                 language: str = "en") -> None:
        self.llm = llm
        self.tools = tools
        self.model = model
        self.max_turns = max_turns
        self.show_thinking = show_thinking  # thinking mode's default: the model's reasoning shown folded
        self.usage = usage  # each request's tokens and cost, per chat and user
        self.budgets = budgets  # a reservation before each request, settled after it
        self.language = language

    async def run(
        self, messages: list[dict[str, Any]], ctx: ToolContext, model: str | None = None,
        thinking: bool | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Stream one user turn. `messages` (system + history + new user message) is not modified; `thinking`:
        the chat's /think choice (None: the default).

        Never raises except CancelledError: every failure ends the stream with a RunFailed.
        """
        model = model or self.model
        show = self.show_thinking if thinking is None else thinking
        history = list(messages)
        tool_specs = self.tools.get_openai_tools()
        tools_tokens = estimate_tokens(json.dumps(tool_specs)) if self.budgets and tool_specs else 0
        asked = time.monotonic()
        warning: str | None = None
        try:
            for _ in range(self.max_turns):
                hold = await self._reserve(ctx, history, model, tools_tokens)
                if isinstance(hold, str):
                    yield RunFinished(text=hold)  # shown, not stored: the model never sees it as its own words
                    return
                warning = warning or (hold.warning if hold else None)
                turn: list[Completion] = []
                asked = time.monotonic()
                try:
                    async for event in self._model_turn(history, tool_specs, model, turn, show):
                        if isinstance(event, ModelTurn):  # a failed link: the next one's time starts now
                            asked = time.monotonic()
                        yield event
                finally:  # also when the request failed or the run was stopped: the estimate is given back
                    if self.budgets is not None:
                        done = turn[0] if turn else None
                        self.budgets.settle(hold, done.usage if done else None, done.cost if done else None)
                completion = turn[0]
                yield _turn(model, asked, completion)
                if self.usage is not None and completion.usage is not None:
                    self.usage.record(ctx.chat, _user(ctx), completion.model or model, completion.usage,
                                      completion.cost)
                if not completion.tool_calls:
                    yield StepMessage(role="assistant", content=completion.text)
                    usage = completion.usage
                    shown = f"{completion.text}\n\n{warning}" if warning else completion.text
                    yield RunFinished(text=shown, prompt_tokens=usage.prompt_tokens if usage else None)
                    return
                calls = [call.to_openai() for call in completion.tool_calls]
                yield StepMessage(role="assistant", content=completion.text, tool_calls=calls)
                history.append({"role": "assistant", "content": completion.text or None, "tool_calls": calls})
                for call in completion.tool_calls:
                    yield ToolStarted(name=call.name, arguments=call.arguments)
                    result = await self.tools.execute(call.name, call.arguments, ctx)
                    ctx.tool_results.append(result)
                    yield ToolFinished(name=call.name, result=result)
                    yield StepMessage(role="tool", content=result, tool_call_id=call.id)
                    history.append({"role": "tool", "tool_call_id": call.id, "content": result})
                if ctx.images:  # shown to the model for this run only: the tree keeps the tool's words
                    history.append(_pictures(ctx.images))
                    ctx.images.clear()
        except LLMError as e:
            yield ModelTurn(e.model or model, time.monotonic() - asked, failed=e.kind)
            yield _failed(e.kind, e.detail, ctx, e.model or model)
            return
        except Exception as e:  # a bug must end the run politely, not kill the session's lane
            yield _failed(FailureKind.OTHER, f"{type(e).__name__}: {e}", ctx, model, exc_info=True)
            return
        yield _failed(FailureKind.TURNS, f"stopped after {self.max_turns} model turns", ctx, model)

    async def _reserve(self, ctx: ToolContext, history: list[dict[str, Any]], model: str, tools_tokens: int
                       ) -> Hold | str | None:
        """The request's reservation on its quotas (bot/agent/budgets.py), or the refusal to show instead."""
        if self.budgets is None:
            return None
        try:
            first = self.llm.chains.resolve(model)[0].model  # a chain's name is no model: its first link is priced
            return await self.budgets.reserve(ctx.chat, _user(ctx), ctx.is_admin, first,
                                              estimate_messages(history) + tools_tokens, ctx.lang or self.language)
        except Exception:  # a database hiccup must not stop answers: the request goes ahead unchecked
            log.exception("quota reservation for %s failed; answering anyway", ctx.chat)
            return None

    async def _model_turn(self, history: list[dict[str, Any]], tools: list[dict[str, Any]], model: str,
                          out: list[Completion], show: bool) -> AsyncIterator[AgentEvent]:
        """One request's events (text, thinking when shown, failed links); its Completion goes into `out`."""
        async for item in self.llm.stream(history, tools, model):
            if isinstance(item, TextChunk):
                yield TextDelta(item.text)
            elif isinstance(item, ReasoningChunk):
                if show:
                    yield ReasoningDelta(item.text)
            elif isinstance(item, Failover):
                yield ModelTurn(item.model, item.seconds, failed=item.kind)
            else:
                out.append(item)


def _user(ctx: ToolContext) -> str:
    return user_key(ctx.where.platform if ctx.where else ctx.chat.partition(":")[0], ctx.user_id)


def _turn(model: str, asked: float, completion: Completion) -> ModelTurn:
    usage = completion.usage
    return ModelTurn(completion.model or model, time.monotonic() - asked, completion.first_token,
                     usage.prompt_tokens if usage else None, usage.completion_tokens if usage else None,
                     len(completion.tool_calls), reasoning=completion.reasoning, cost=completion.cost)


def _failed(kind: FailureKind, detail: str, ctx: ToolContext, model: str, exc_info: bool = False) -> RunFailed:
    error_id = token_hex(4)
    log.warning("agent run failed [%s] kind=%s chat=%s model=%s: %s", error_id, kind, ctx.chat, model, detail,
                exc_info=exc_info)
    return RunFailed(kind=kind, error_id=error_id, detail=detail)


def _pictures(images: list[tuple[str, bytes]]) -> dict[str, Any]:
    """Images a tool produced, as a user message of image parts (tool messages carry text only)."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": "[Images from the tool calls above]"}]
    parts += [{"type": "image_url", "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"}}
              for mime, data in images]
    return {"role": "user", "content": parts}
