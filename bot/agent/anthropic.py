"""Anthropic's Messages API behind the provider interface: our OpenAI-shaped history and tools in, its SSE
stream (text, tool use, thinking) out as the same chunks and Completion as the OpenAI-compatible kind.

The system prompt and the history up to the newest message are marked for prompt caching, so a chat's
long common prefix is billed at the cached rate. Thinking blocks are handed back only where the API demands
them: with the assistant turn that asked for tools, until their results are answered.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from bot.agent.events import FailureKind
from bot.agent.modelapi import Completion, ReasoningChunk, StreamItem, TextChunk, ToolCall, Usage, merged_turns
from bot.agent.openai_chat import sse_data
from bot.agent.provider import LLMError, Provider, error_kind
from bot.llmconfig import ProviderConfig

DEFAULT_URL = "https://api.anthropic.com/v1"
VERSION = "2023-06-01"
KEPT_THINKING = 1024  # tool turns whose thinking blocks are kept for the follow-up request
CACHE = {"type": "ephemeral"}


def auth(key: str | None) -> dict[str, str]:
    return {"x-api-key": key or "", "anthropic-version": VERSION}


@dataclass
class _Block:
    kind: str  # "text" | "tool_use" | "thinking" | "redacted_thinking"
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    data: str = ""  # redacted thinking, opaque


class AnthropicMessages:
    def __init__(self, provider: Provider, cfg: ProviderConfig, temperature: float | None) -> None:
        self.provider = provider
        self.max_tokens, self.thinking_tokens, self.temperature = cfg.max_tokens, cfg.thinking_tokens, temperature
        self._thinking: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()  # first tool-use id → its blocks

    async def close(self) -> None:
        await self.provider.close()

    async def stream(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, model: str,
                     retries: int | None = None) -> AsyncIterator[StreamItem]:
        body = self._request(messages, tools, model)
        blocks: dict[int, _Block] = {}
        usage, finish, first_token, sent = Usage(), None, None, time.monotonic()
        async with self.provider.post("/messages", json.dumps(body, ensure_ascii=False).encode(),
                                      retries=retries) as response:
            async for data in sse_data(response):
                event = self._event(data)
                kind = event.get("type")
                if kind == "error":
                    error = event["error"] if isinstance(event.get("error"), dict) else {}
                    raise LLMError(error_kind(None, error),
                                   self.provider.describe(f"in-stream error: {error.get('message')}"))
                if kind == "message_start":
                    usage = _usage(event.get("message", {}).get("usage") or {}, usage)
                elif kind == "message_delta":
                    usage = _usage(event.get("usage") or {}, usage)
                    finish = (event.get("delta") or {}).get("stop_reason") or finish
                elif kind in ("content_block_start", "content_block_delta"):
                    block, delta = _block_event(blocks, event)
                    if (piece := _delta(block, delta)) is not None:
                        first_token = first_token if first_token is not None else time.monotonic() - sent
                        yield piece
        yield self._completion(blocks, usage, finish, first_token)

    def _event(self, data: bytes) -> dict[str, Any]:
        try:
            event = json.loads(data)
        except ValueError as e:
            raise LLMError(FailureKind.OTHER, self.provider.describe(f"malformed event from the provider: {e}")) from e
        return event if isinstance(event, dict) else {}

    def _completion(self, blocks: dict[int, _Block], usage: Usage, finish: str | None, first_token: float | None
                    ) -> Completion:
        ordered = [blocks[i] for i in sorted(blocks)]
        calls = [ToolCall(b.id, b.name, "".join(b.parts) or "{}") for b in ordered if b.kind == "tool_use"]
        thinking = [_thinking_block(b) for b in ordered if b.kind in ("thinking", "redacted_thinking")]
        if calls and thinking:  # the follow-up request must carry them back, signed
            self._thinking[calls[0].id] = thinking
            while len(self._thinking) > KEPT_THINKING:
                self._thinking.popitem(last=False)
        text = "".join("".join(b.parts) for b in ordered if b.kind == "text")
        reasoning = "".join("".join(b.parts) for b in ordered if b.kind == "thinking")
        finish = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}.get(finish or "", finish)
        return Completion(text, calls, finish, usage, first_token, reasoning)

    def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, model: str
                 ) -> dict[str, Any]:
        system = [{"type": "text", "text": m["content"]} for m in messages
                  if m.get("role") == "system" and isinstance(m.get("content"), str) and m["content"]]
        if system:
            system[-1]["cache_control"] = CACHE
        turns = self._turns([m for m in messages if m.get("role") != "system"])
        if turns and turns[-1]["content"]:
            turns[-1]["content"][-1]["cache_control"] = CACHE  # the history so far: the next request's prefix
        body: dict[str, Any] = {"model": model, "max_tokens": self.max_tokens, "messages": turns, "stream": True}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
                              "input_schema": t["function"].get("parameters") or {"type": "object"}} for t in tools]
        if self.thinking_tokens:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_tokens}
        elif self.temperature is not None:  # the API refuses a temperature with thinking on
            body["temperature"] = self.temperature
        return body

    def _turns(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return merged_turns(messages, "assistant", "content", self._blocks)

    def _blocks(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        if message.get("role") == "tool":
            return [{"type": "tool_result", "tool_use_id": message.get("tool_call_id") or "",
                     "content": str(message.get("content") or "")}]
        blocks = _content_blocks(message.get("content"))
        calls = message.get("tool_calls") or []
        if calls:
            blocks = self._thinking.get(calls[0].get("id", ""), []) + blocks
        for call in calls:
            function = call.get("function") or {}
            blocks.append({"type": "tool_use", "id": call.get("id", ""), "name": function.get("name", ""),
                           "input": _arguments(function.get("arguments"))})
        return blocks


def _content_blocks(content: Any) -> list[dict[str, Any]]:
    """Text and images (data: URLs become base64 sources) from OpenAI-style content."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        if part.get("type") == "text" and part.get("text"):
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url" and (source := image_source(part)) is not None:
            blocks.append({"type": "image", "source": source})
    return blocks


def image_source(part: dict[str, Any]) -> dict[str, str] | None:
    """An OpenAI-style image part's data: URL as a base64 source (the hub sends images inline)."""
    url = str((part.get("image_url") or {}).get("url") or "")
    head, _, data = url.partition(",")
    if not (head.startswith("data:") and head.endswith(";base64")):
        return None
    return {"type": "base64", "media_type": head[5:-7], "data": data}


def _arguments(text: Any) -> Any:
    """The API takes tool input as an object; arguments the model garbled go back as an empty one."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _block_event(blocks: dict[int, _Block], event: dict[str, Any]) -> tuple[_Block, dict[str, Any]]:
    """The block an event is about, and its delta: a block's start may already carry text, streamed as one."""
    index = event.get("index", 0)
    if event.get("type") == "content_block_delta":
        return blocks.setdefault(index, _Block("text")), event.get("delta") or {}
    start = event.get("content_block") or {}
    kind = str(start.get("type") or "text")
    blocks[index] = _Block(kind, id=str(start.get("id") or ""), name=str(start.get("name") or ""),
                           data=str(start.get("data") or ""))
    return blocks[index], {"type": "text_delta", "text": start.get("text")} if kind == "text" else {}


def _delta(block: _Block, delta: dict[str, Any]) -> TextChunk | ReasoningChunk | None:
    """Add a delta to its block; text and thinking are also streamed on, tool input only accumulates."""
    kind = delta.get("type")
    if kind == "text_delta" and (text := delta.get("text")):
        block.parts.append(text)
        return TextChunk(text)
    if kind == "thinking_delta" and (text := delta.get("thinking")):
        block.parts.append(text)
        return ReasoningChunk(text)
    if kind == "input_json_delta":
        block.parts.append(delta.get("partial_json") or "")
    elif kind == "signature_delta":
        block.signature += delta.get("signature") or ""
    return None


def _thinking_block(block: _Block) -> dict[str, Any]:
    if block.kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "thinking", "thinking": "".join(block.parts), "signature": block.signature}


def _usage(used: dict[str, Any], before: Usage) -> Usage:
    """message_start reports the input (cache reads and writes apart), message_delta the output so far."""
    cached = used.get("cache_read_input_tokens")
    if "input_tokens" in used:
        prompt = (used.get("input_tokens") or 0) + (cached or 0) + (used.get("cache_creation_input_tokens") or 0)
        before = Usage(prompt, before.completion_tokens, cached or 0)
    if "output_tokens" in used:
        before = Usage(before.prompt_tokens, used.get("output_tokens") or 0, before.cached_tokens)
    return before
