"""One streamed model turn through the official `openai` SDK, with failures reduced to a small `kind`.

The SDK retries 429/5xx/timeouts itself before a stream starts (`max_retries`); once text is flowing
nothing is retried here, because the user has already seen it. Tool-call arguments are accumulated
by index and left as raw text: the tool registry parses them after the stream and tells the model
when they are not valid JSON.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from secrets import token_hex
from typing import Any

import aiohttp
import httpx2
import openai

from bot.config import LLMConfig

PLACEHOLDER_KEY = "not-needed"  # local OpenAI-compatible servers (Ollama, vLLM) ignore the key
CONNECT_TIMEOUT = 5.0
_KEY_PATTERN = re.compile(r"\b(sk|key)-[A-Za-z0-9_\-*]{6,}")


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


class LLMError(Exception):
    """A failed model call; `kind` is one of the RunFailed kinds, `detail` is for logs only."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class LLMClient:
    def __init__(self, cfg: LLMConfig) -> None:
        self._cfg = cfg
        self._client = openai.AsyncOpenAI(
            api_key=cfg.api_key or PLACEHOLDER_KEY,
            base_url=cfg.base_url,
            timeout=openai.Timeout(cfg.timeout, connect=min(CONNECT_TIMEOUT, cfg.timeout)),
            max_retries=cfg.max_retries,
            # The SDK's aiohttp transport: httpx's pool scans every open connection for each request, which
            # turns a thousand concurrent answers into a quadratic stall on the event loop.
            http_client=openai.DefaultAioHttpClient(),
        )
        self.total_usage = Usage()  # across all calls: /metrics shows it (bothub_llm_tokens)
        self.on_usage: Callable[[str, Usage], None] | None = None  # (model, usage) per call: the overview

    async def close(self) -> None:
        await self._client.close()

    def transcriber(self, model: str | None) -> Callable[[Path], Awaitable[str]] | None:
        """A voice-to-text function on the provider's /audio/transcriptions, or None without a model."""
        if not model:
            return None

        async def transcribe(path: Path) -> str:
            audio = await asyncio.to_thread(path.read_bytes)
            result = await self._client.audio.transcriptions.create(
                model=model, file=(path.name, audio), response_format="text")
            return result if isinstance(result, str) else str(getattr(result, "text", ""))

        return transcribe

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, model: str
    ) -> AsyncIterator[TextChunk | Completion]:
        """Yield TextChunk as content arrives, then exactly one Completion; raise LLMError on failure."""
        # Messages and tools are plain JSON-ready dicts already. Passed as `messages=`, the SDK walks every
        # field of every message against its TypedDicts before sending — synchronously, on the event loop,
        # ~0.15 ms per history message. `extra_body` sends them as they are (the wire body is identical).
        body: dict[str, Any] = {"messages": messages}
        if tools:  # the API rejects an empty tools list
            body["tools"] = tools
        kwargs: dict[str, Any] = {"model": model, "messages": [], "stream": True,
                                  "stream_options": {"include_usage": True}, "extra_body": body}
        if self._cfg.temperature is not None:
            kwargs["temperature"] = self._cfg.temperature
        text: list[str] = []
        calls: dict[int, _PartialCall] = {}
        finish: str | None = None
        usage: Usage | None = None
        try:
            # The raw SSE lines rather than the SDK's typed chunks: building a pydantic model per chunk was
            # the largest CPU cost of a streamed answer. Errors before the stream keep the SDK's types and
            # retries; an in-stream error event becomes the SDK's APIError, as the SDK itself would raise.
            streaming = self._client.chat.completions.with_streaming_response.create(**kwargs)
            async with streaming as response:
                async for chunk in _sse_chunks(response):
                    if chunk.get("error"):
                        error = chunk["error"]
                        message = error.get("message") if isinstance(error, dict) else None
                        raise openai.APIError(str(message or "error during streaming"), response.http_request,
                                              body=error)
                    if isinstance(chunk.get("usage"), dict):
                        used = chunk["usage"]
                        usage = Usage(used.get("prompt_tokens") or 0, used.get("completion_tokens") or 0)
                    choices = chunk.get("choices") or ()
                    if not choices:
                        continue
                    choice = choices[0]
                    delta = choice.get("delta") or {}
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
        except openai.OpenAIError as e:
            raise LLMError(classify(e), self._describe(e)) from e
        except httpx2.TimeoutException as e:  # a stall once the stream had started
            raise LLMError("timeout", self._describe(e)) from e
        except Exception as e:  # transport errors mid-stream (e.g. a connection cut), or a malformed chunk
            raise LLMError("connection" if _is_transport_error(e) else "other", self._describe(e)) from e
        if usage is not None:
            self.total_usage += usage
            if self.on_usage is not None:
                self.on_usage(model, usage)
        yield Completion("".join(text), [_finish_call(i, p) for i, p in sorted(calls.items())], finish, usage)

    def _describe(self, e: BaseException) -> str:
        """Error text for logs, with anything key-like removed (401 bodies echo part of the key)."""
        detail = f"{type(e).__name__}: {e}"
        if self._cfg.api_key:
            detail = detail.replace(self._cfg.api_key, "***")
        return _KEY_PATTERN.sub(r"\1-***", detail)


def _finish_call(index: int, partial: _PartialCall) -> ToolCall:
    # Some OpenAI-compatible servers omit ids or send no arguments; the next request needs both.
    call_id = partial.id or f"call_{index}_{token_hex(4)}"
    return ToolCall(call_id, partial.name, "".join(partial.arguments) or "{}")


async def _sse_chunks(response: Any) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of an OpenAI-style SSE stream (`data: {...}` lines), up to `data: [DONE]`."""
    async for line in response.iter_lines():
        if not line.startswith("data:"):
            continue  # blank separators, comments, `event:` lines
        data = line[5:].strip()
        if data == "[DONE]":
            return
        chunk = json.loads(data)
        if isinstance(chunk, dict):
            yield chunk


def _is_transport_error(e: Exception) -> bool:
    transport_packages = ("httpx", "httpx2", "httpcore", "h11", "aiohttp")
    return type(e).__module__.split(".")[0] in transport_packages or isinstance(e, OSError)


def _caused_by(e: BaseException, kind: type[BaseException]) -> bool:
    cause: BaseException | None = e
    while cause is not None:
        if isinstance(cause, kind):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def classify(e: openai.OpenAIError) -> str:
    """Map an SDK error to a RunFailed kind."""
    code = getattr(e, "code", None)
    message = str(getattr(e, "message", e)).lower()
    if code == "context_length_exceeded" or (
        isinstance(e, openai.BadRequestError) and ("context length" in message or "context_length" in message)
    ):
        return "context"
    if isinstance(e, openai.APITimeoutError):  # before APIConnectionError: it is a subclass
        # the aiohttp transport reports a refused connection as a connect timeout; look at the real cause
        return "connection" if _caused_by(e, aiohttp.ClientConnectorError) else "timeout"
    if isinstance(e, openai.APIConnectionError):
        return "connection"
    if isinstance(e, openai.RateLimitError) or code == "rate_limit_exceeded":
        return "rate_limit"
    if isinstance(e, openai.AuthenticationError | openai.PermissionDeniedError):
        return "auth"
    if isinstance(e, openai.InternalServerError) or (
        isinstance(e, openai.APIStatusError) and e.status_code >= 500
    ):
        return "server"
    if isinstance(e, openai.APIError) and getattr(e, "type", None) == "server_error":
        return "server"  # an in-stream error event from the provider
    return "other"
