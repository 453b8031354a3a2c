"""The agent loop (seed 000): model → tools → model … until a plain answer, a failure or the turn limit.

It only streams events; the hub persists each StepMessage into the conversation tree and renders text,
so a run that fails half-way still leaves every tool call and result it made on record.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from secrets import token_hex
from typing import Any

from bot.agent.events import (
    AgentEvent,
    FailureKind,
    ModelTurn,
    RunFailed,
    RunFinished,
    StepMessage,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from bot.agent.llm import Completion, LLMClient, TextChunk
from bot.agent.provider import LLMError
from bot.agent.tools.registry import ToolContext, ToolRegistry

log = logging.getLogger("bothub.agent")


class AgentLoop:
    def __init__(self, llm: LLMClient, tools: ToolRegistry, model: str, max_turns: int = 30) -> None:
        self.llm = llm
        self.tools = tools
        self.model = model
        self.max_turns = max_turns

    async def run(
        self, messages: list[dict[str, Any]], ctx: ToolContext, model: str | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Stream one user turn. `messages` (system + history + new user message) is not modified.

        Never raises except CancelledError: every failure ends the stream with a RunFailed.
        """
        model = model or self.model
        history = list(messages)
        tool_specs = self.tools.get_openai_tools()
        asked = time.monotonic()
        try:
            for _ in range(self.max_turns):
                completion: Completion | None = None
                asked = time.monotonic()
                async for item in self.llm.stream(history, tool_specs, model):
                    if isinstance(item, TextChunk):
                        yield TextDelta(item.text)
                    else:
                        completion = item
                assert completion is not None  # LLMClient.stream always ends with one
                yield _turn(model, asked, completion)
                if not completion.tool_calls:
                    yield StepMessage(role="assistant", content=completion.text)
                    usage = completion.usage
                    yield RunFinished(text=completion.text, prompt_tokens=usage.prompt_tokens if usage else None)
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
        except LLMError as e:
            yield ModelTurn(model, time.monotonic() - asked, failed=e.kind)
            yield _failed(e.kind, e.detail, ctx, model)
            return
        except Exception as e:  # a bug must end the run politely, not kill the session's lane
            yield _failed(FailureKind.OTHER, f"{type(e).__name__}: {e}", ctx, model, exc_info=True)
            return
        yield _failed(FailureKind.TURNS, f"stopped after {self.max_turns} model turns", ctx, model)


def _turn(model: str, asked: float, completion: Completion) -> ModelTurn:
    usage = completion.usage
    return ModelTurn(model, time.monotonic() - asked, completion.first_token,
                     usage.prompt_tokens if usage else None, usage.completion_tokens if usage else None,
                     len(completion.tool_calls))


def _failed(kind: FailureKind, detail: str, ctx: ToolContext, model: str, exc_info: bool = False) -> RunFailed:
    error_id = token_hex(4)
    log.warning("agent run failed [%s] kind=%s chat=%s model=%s: %s", error_id, kind, ctx.chat, model, detail,
                exc_info=exc_info)
    return RunFailed(kind=kind, error_id=error_id, detail=detail)
