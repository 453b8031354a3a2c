"""Google's Gemini API (`streamGenerateContent`, SSE) behind the provider interface: our OpenAI-shaped history
and tools in, text, thought summaries and function calls out as the same chunks and Completion.

Gemini names a function's result by the function's name, not a call id, so the names come from the assistant
turn that asked; its calls carry no ids of their own, so ids are made here, once per call.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from secrets import token_hex
from typing import Any

from bot.agent.anthropic import image_source
from bot.agent.events import FailureKind
from bot.agent.modelapi import Completion, ReasoningChunk, StreamItem, TextChunk, ToolCall, Usage, merged_turns
from bot.agent.openai_chat import sse_data
from bot.agent.provider import LLMError, Provider, error_kind
from bot.llmconfig import ProviderConfig

DEFAULT_URL = "https://generativelanguage.googleapis.com/v1beta"
_FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}


def auth(key: str | None) -> dict[str, str]:
    return {"x-goog-api-key": key or ""}


class GeminiContents:
    def __init__(self, provider: Provider, cfg: ProviderConfig, temperature: float | None) -> None:
        self.provider = provider
        self.max_tokens, self.thinking_tokens, self.temperature = cfg.max_tokens, cfg.thinking_tokens, temperature

    async def close(self) -> None:
        await self.provider.close()

    async def stream(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, model: str,
                     retries: int | None = None) -> AsyncIterator[StreamItem]:
        body = json.dumps(self._request(messages, tools), ensure_ascii=False).encode()
        text, thoughts, calls = [], [], []
        usage, finish, first_token, sent = None, None, None, time.monotonic()
        path = f"/models/{model}:streamGenerateContent?alt=sse"
        async with self.provider.post(path, body, retries=retries) as response:
            async for data in sse_data(response):
                chunk = self._chunk(data)
                if isinstance(chunk.get("usageMetadata"), dict):
                    usage = _usage(chunk["usageMetadata"])
                candidate = (chunk.get("candidates") or [{}])[0]
                finish = candidate.get("finishReason") or finish
                for part in (candidate.get("content") or {}).get("parts") or ():
                    if first_token is None:
                        first_token = time.monotonic() - sent
                    if isinstance(call := part.get("functionCall"), dict):
                        calls.append(ToolCall(str(call.get("id") or f"call_{token_hex(6)}"), str(call.get("name")),
                                              json.dumps(call.get("args") or {}, ensure_ascii=False)))
                    elif part.get("text") and part.get("thought"):
                        thoughts.append(part["text"])
                        yield ReasoningChunk(part["text"])
                    elif part.get("text"):
                        text.append(part["text"])
                        yield TextChunk(part["text"])
        finish = "tool_calls" if calls else _FINISH.get(finish or "", finish)
        yield Completion("".join(text), calls, finish, usage, first_token, "".join(thoughts))

    def _chunk(self, data: bytes) -> dict[str, Any]:
        try:
            chunk = json.loads(data)
        except ValueError as e:
            raise LLMError(FailureKind.OTHER, self.provider.describe(f"malformed chunk from the provider: {e}")) from e
        if not isinstance(chunk, dict):
            return {}
        if isinstance(error := chunk.get("error"), dict):  # an in-stream error
            raise LLMError(error_kind(error.get("code"), error),
                           self.provider.describe(f"in-stream error: {error.get('message')}"))
        return chunk

    def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in messages
                             if m.get("role") == "system" and isinstance(m.get("content"), str))
        config: dict[str, Any] = {"maxOutputTokens": self.max_tokens}
        if self.temperature is not None:
            config["temperature"] = self.temperature
        if self.thinking_tokens:
            config["thinkingConfig"] = {"thinkingBudget": self.thinking_tokens, "includeThoughts": True}
        body: dict[str, Any] = {"contents": _contents([m for m in messages if m.get("role") != "system"]),
                                "generationConfig": config}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        if tools:
            body["tools"] = [{"functionDeclarations": [
                {"name": t["function"]["name"], "description": t["function"].get("description", ""),
                 "parameters": t["function"].get("parameters") or {"type": "object"}} for t in tools]}]
        return body


def _contents(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """user/model turns of parts; a tool result is a user turn's functionResponse, named after its call."""
    names: dict[str, str] = {}
    return merged_turns(messages, "model", "parts", lambda message: _parts(message, names))


def _parts(message: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    if message.get("role") == "tool":
        name = names.get(message.get("tool_call_id") or "", "tool")
        return [{"functionResponse": {"name": name, "response": {"result": str(message.get("content") or "")}}}]
    parts = _content_parts(message.get("content"))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        names[call.get("id", "")] = function.get("name", "")
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            args = {}
        parts.append({"functionCall": {"name": function.get("name", ""), "args": args if isinstance(args, dict)
                                       else {}}})
    return parts


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        if part.get("type") == "text" and part.get("text"):
            parts.append({"text": part["text"]})
        elif part.get("type") == "image_url" and (source := image_source(part)) is not None:
            parts.append({"inlineData": {"mimeType": source["media_type"], "data": source["data"]}})
    return parts


def _usage(meta: dict[str, Any]) -> Usage:
    """Thought tokens are billed as output."""
    output = (meta.get("candidatesTokenCount") or 0) + (meta.get("thoughtsTokenCount") or 0)
    return Usage(meta.get("promptTokenCount") or 0, output, meta.get("cachedContentTokenCount") or 0)
