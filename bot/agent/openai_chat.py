"""One streamed model turn over the OpenAI-compatible Chat Completions API (OpenAI, vLLM, Ollama, DeepSeek …).

bot/agent/provider.py sends the request and retries 429/5xx/timeouts before a stream starts; once text is
flowing nothing is retried, because the user has already seen it. Tool-call arguments are accumulated by
index and left as raw text: the tool registry parses them after the stream and tells the model when they
are not valid JSON. `reasoning_content` (DeepSeek, vLLM, …) or `reasoning` deltas are thinking, not answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from secrets import token_hex
from typing import Any

from bot.agent.events import FailureKind
from bot.agent.http1 import Response
from bot.agent.modelapi import Completion, ReasoningChunk, StreamItem, TextChunk, ToolCall, Usage
from bot.agent.provider import LLMError, Provider, error_kind


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class OpenAIChat:
    def __init__(self, provider: Provider, temperature: float | None = None) -> None:
        self.provider = provider
        self.temperature = temperature
        self._tools_json: tuple[list[dict[str, Any]], str] | None = None  # (tool list, its JSON): see _encode

    async def close(self) -> None:
        await self.provider.close()

    async def stream(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, model: str,
                     retries: int | None = None) -> AsyncIterator[StreamItem]:
        """Yield chunks as they arrive, then exactly one Completion; raise LLMError on failure."""
        body: dict[str, Any] = {"model": model, "messages": messages, "stream": True,
                                "stream_options": {"include_usage": True}}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        text: list[str] = []
        thinking: list[str] = []
        calls: dict[int, _PartialCall] = {}
        finish: str | None = None
        usage: Usage | None = None
        sent = time.monotonic()
        first_token: float | None = None
        async with self.provider.post("/chat/completions", self._encode(body, tools), retries=retries) as response:
            async for chunk in _sse_chunks(response, self.provider.describe):
                if error := chunk.get("error"):  # an in-stream error event: the provider gave up mid-answer
                    error = error if isinstance(error, dict) else {"message": str(error)}
                    message = error.get("message") or "error during streaming"
                    raise LLMError(error_kind(None, error), self.provider.describe(f"in-stream error: {message}"))
                if isinstance(chunk.get("usage"), dict):
                    usage = _usage(chunk["usage"])
                choices = chunk.get("choices") or ()
                if not choices:
                    continue
                choice = choices[0]
                delta = choice.get("delta") or {}
                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                content = delta.get("content")
                if first_token is None and (content or reasoning or delta.get("tool_calls")):
                    first_token = time.monotonic() - sent
                if isinstance(reasoning, str) and reasoning:
                    thinking.append(reasoning)
                    yield ReasoningChunk(reasoning)
                if content:
                    text.append(content)
                    yield TextChunk(content)
                for tc in delta.get("tool_calls") or ():
                    partial = calls.setdefault(tc.get("index", 0), _PartialCall())
                    partial.id = tc.get("id") or partial.id
                    function = tc.get("function") or {}
                    partial.name += function.get("name") or ""
                    partial.arguments.append(function.get("arguments") or "")
                finish = choice.get("finish_reason") or finish
        yield Completion("".join(text), [_finish_call(i, p) for i, p in sorted(calls.items())], finish, usage,
                         first_token, "".join(thinking))

    def _encode(self, body: dict[str, Any], tools: list[dict[str, Any]] | None) -> bytes:
        """The request as JSON. The tool list is the same object until the tools change and about half of a
        request's bytes, so its JSON is made once and spliced in; the API rejects an empty tools list."""
        text = json.dumps(body, ensure_ascii=False)
        if not tools:
            return text.encode()
        if self._tools_json is None or self._tools_json[0] is not tools:
            self._tools_json = (tools, json.dumps(tools, ensure_ascii=False))
        return f'{text[:-1]}, "tools": {self._tools_json[1]}}}'.encode()


def _usage(used: dict[str, Any]) -> Usage:
    details = used.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(used.get("prompt_tokens") or 0, used.get("completion_tokens") or 0, cached or 0)


def _finish_call(index: int, partial: _PartialCall) -> ToolCall:
    # Some OpenAI-compatible servers omit ids or send no arguments; the next request needs both.
    call_id = partial.id or f"call_{index}_{token_hex(4)}"
    return ToolCall(call_id, partial.name, "".join(partial.arguments) or "{}")


async def _sse_chunks(response: Response, describe: Callable[[str], str]
                      ) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of an OpenAI-style SSE stream (`data: {...}` lines), up to `data: [DONE]`."""
    async for data in sse_data(response):
        if data == b"[DONE]":
            return
        try:
            chunk = json.loads(data)
        except ValueError as e:
            raise LLMError(FailureKind.OTHER, describe(f"malformed chunk from the provider: {e}")) from e
        if isinstance(chunk, dict):
            yield chunk


async def sse_data(response: Response) -> AsyncIterator[bytes]:
    """The `data:` payloads of an SSE stream (`event:` lines, comments and separators skipped).

    Lines are split here rather than by the reader's readline, which refuses lines over 128 KiB (a tool call's
    arguments can arrive whole in one event)."""
    pending: list[bytes] = []
    async for piece in response.iter_any():
        pending.append(piece)
        if b"\n" not in piece:
            continue
        *lines, rest = b"".join(pending).split(b"\n")
        pending = [rest]
        for line in lines:
            if line.startswith(b"data:"):
                yield line[5:].strip()
