"""One streamed model turn, parsed from the provider's SSE stream, with failures reduced to a small `kind`.

bot/agent/provider.py sends the request and retries 429/5xx/timeouts before a stream starts; once text is
flowing nothing is retried, because the user has already seen it. Tool-call arguments are accumulated by
index and left as raw text: the tool registry parses them after the stream and tells the model when they
are not valid JSON.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from secrets import token_hex
from typing import Any

from bot.agent.events import FailureKind
from bot.agent.http1 import Response, multipart
from bot.agent.provider import LLMError, Provider, error_kind
from bot.config import LLMConfig


@dataclass(frozen=True, slots=True)
class TextChunk:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text, as the model produced it

    def to_openai(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": self.arguments}
        return {"id": self.id, "type": "function", "function": function}


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        prompt = self.prompt_tokens + other.prompt_tokens
        return Usage(prompt, self.completion_tokens + other.completion_tokens)


@dataclass(frozen=True, slots=True)
class Completion:
    """The end of one streamed turn: everything the caller needs to store it or run its tools."""

    text: str
    tool_calls: list[ToolCall]
    finish_reason: str | None
    usage: Usage | None
    first_token: float | None = None  # seconds from sending the request to the first content or tool call


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class LLMClient:
    def __init__(self, cfg: LLMConfig, on_usage: Callable[[str, Usage], None] | None = None) -> None:
        self._cfg = cfg
        self.provider = Provider(cfg.base_url, cfg.api_key, cfg.timeout, cfg.max_retries)
        self.total_usage = Usage()  # across all calls: /metrics shows it (bothub_llm_tokens)
        self.on_usage = on_usage  # (model, usage) per call: the overview
        self._tools_json: tuple[list[dict[str, Any]], str] | None = None  # (tool list, its JSON): see _encode

    async def close(self) -> None:
        await self.provider.close()

    def transcriber(self, model: str | None) -> Callable[[Path], Awaitable[str]] | None:
        """A voice-to-text function on the provider's /audio/transcriptions, or None without a model."""
        if not model:
            return None

        async def transcribe(path: Path) -> str:
            audio = await asyncio.to_thread(path.read_bytes)
            form, content_type = multipart({"model": model, "response_format": "text"}, "file", path.name, audio)
            async with self.provider.post("/audio/transcriptions", form, content_type) as response:
                return await response.text()

        return transcribe

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, model: str
    ) -> AsyncIterator[TextChunk | Completion]:
        """Yield TextChunk as content arrives, then exactly one Completion; raise LLMError on failure."""
        body: dict[str, Any] = {"model": model, "messages": messages, "stream": True,
                                "stream_options": {"include_usage": True}}
        if self._cfg.temperature is not None:
            body["temperature"] = self._cfg.temperature
        text: list[str] = []
        calls: dict[int, _PartialCall] = {}
        finish: str | None = None
        usage: Usage | None = None
        sent = time.monotonic()
        first_token: float | None = None
        async with self.provider.post("/chat/completions", self._encode(body, tools)) as response:
            async for chunk in _sse_chunks(response, self.provider.describe):
                if error := chunk.get("error"):  # an in-stream error event: the provider gave up mid-answer
                    error = error if isinstance(error, dict) else {"message": str(error)}
                    message = error.get("message") or "error during streaming"
                    raise LLMError(error_kind(None, error), self.provider.describe(f"in-stream error: {message}"))
                if isinstance(chunk.get("usage"), dict):
                    used = chunk["usage"]
                    usage = Usage(used.get("prompt_tokens") or 0, used.get("completion_tokens") or 0)
                choices = chunk.get("choices") or ()
                if not choices:
                    continue
                choice = choices[0]
                delta = choice.get("delta") or {}
                if first_token is None and (delta.get("content") or delta.get("tool_calls")):
                    first_token = time.monotonic() - sent
                if content := delta.get("content"):
                    text.append(content)
                    yield TextChunk(content)
                for tc in delta.get("tool_calls") or ():
                    partial = calls.setdefault(tc.get("index", 0), _PartialCall())
                    partial.id = tc.get("id") or partial.id
                    function = tc.get("function") or {}
                    partial.name += function.get("name") or ""
                    partial.arguments.append(function.get("arguments") or "")
                finish = choice.get("finish_reason") or finish
        if usage is not None:
            self.total_usage += usage
            if self.on_usage is not None:
                self.on_usage(model, usage)
        yield Completion("".join(text), [_finish_call(i, p) for i, p in sorted(calls.items())], finish, usage,
                         first_token)

    def _encode(self, body: dict[str, Any], tools: list[dict[str, Any]] | None) -> bytes:
        """The request as JSON. The tool list is the same object until the tools change and about half of a
        request's bytes, so its JSON is made once and spliced in; the API rejects an empty tools list."""
        text = json.dumps(body, ensure_ascii=False)
        if not tools:
            return text.encode()
        if self._tools_json is None or self._tools_json[0] is not tools:
            self._tools_json = (tools, json.dumps(tools, ensure_ascii=False))
        return f'{text[:-1]}, "tools": {self._tools_json[1]}}}'.encode()

    async def complete(self, messages: list[dict[str, Any]], model: str) -> str:
        """The whole text of one answer without tools (summaries, titles); raises LLMError on failure."""
        async for item in self.stream(messages, None, model):
            if isinstance(item, Completion):
                return item.text
        raise LLMError(FailureKind.OTHER, "the stream ended without a completion")  # stream() always ends with one


def _finish_call(index: int, partial: _PartialCall) -> ToolCall:
    # Some OpenAI-compatible servers omit ids or send no arguments; the next request needs both.
    call_id = partial.id or f"call_{index}_{token_hex(4)}"
    return ToolCall(call_id, partial.name, "".join(partial.arguments) or "{}")


async def _sse_chunks(response: Response, describe: Callable[[str], str]
                      ) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of an OpenAI-style SSE stream (`data: {...}` lines), up to `data: [DONE]`.

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
            if not line.startswith(b"data:"):
                continue  # blank separators, comments, `event:` lines
            data = line[5:].strip()
            if data == b"[DONE]":
                return
            try:
                chunk = json.loads(data)
            except ValueError as e:
                raise LLMError(FailureKind.OTHER, describe(f"malformed chunk from the provider: {e}")) from e
            if isinstance(chunk, dict):
                yield chunk
