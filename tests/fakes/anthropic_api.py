"""A scripted Anthropic Messages API on 127.0.0.1: the real SSE event sequence, the real error bodies, and
the checks the real API makes (key, version header, tool results answering tool uses, thinking rules).

Each POST /v1/messages pops the next step; with none left it echoes the last user text. Prompt caching is
modelled on the system prompt: a request whose cached system text was seen before reads it from the cache.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.serve import serve_local

API_KEY = "anthropic-test-key"
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
SIGNATURE = "c2lnbmVkIHRoaW5raW5n"  # what the fake signs thinking with; handed-back blocks must carry it


@dataclass(frozen=True)
class Answer:
    """Stream `thinking` (when given, as a signed thinking block), then `text`, then each tool use."""

    text: str = ""
    thinking: str = ""
    tools: tuple[tuple[str, str, dict[str, Any]], ...] = ()  # (id, name, input)


@dataclass(frozen=True)
class Failure:
    """An HTTP error with the API's body: {"type": "error", "error": {"type": …, "message": …}}."""

    status: int
    type: str
    message: str = "scripted error"


@dataclass(frozen=True)
class Overloaded:
    """Stream `text`, then an in-stream `error` event (overloaded_error), as the API does under load."""

    text: str = ""


@dataclass(frozen=True)
class Events:
    """Stream these `data:` payloads as they are: the wire shapes an Answer does not make (a redacted thinking
    block, text already in a block's start, a delta kind this client does not know, a broken event)."""

    data: tuple[str, ...]


Step = Answer | Failure | Overloaded | Events


@dataclass
class FakeAnthropic:
    api_key: str = API_KEY
    requests: list[dict[str, Any]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    _steps: list[Step] = field(default_factory=list)
    _cached: set[str] = field(default_factory=set)
    _runner: web.AppRunner | None = None
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *steps: Step) -> None:
        self._steps.extend(steps)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_get("/v1/models", self._models)
        self._runner, self.port = await serve_local(app, 0, handler_cancellation=True, shutdown_timeout=1.0)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _refuse(self, status: int, kind: str, message: str) -> web.Response:
        self.refusals.append(message)
        return web.json_response({"type": "error", "error": {"type": kind, "message": message}}, status=status)

    async def _models(self, request: web.Request) -> web.Response:
        if request.headers.get("x-api-key") != self.api_key:
            return self._refuse(401, "authentication_error", "invalid x-api-key")
        return web.json_response({"data": [{"type": "model", "id": "claude-fake"}], "has_more": False})

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append({"body": body, "headers": dict(request.headers)})
        if request.headers.get("x-api-key") != self.api_key:
            return self._refuse(401, "authentication_error", "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            return self._refuse(400, "invalid_request_error", "anthropic-version: header is required")
        if problem := _check(body):
            return self._refuse(400, "invalid_request_error", problem)
        step = self._steps.pop(0) if self._steps else Answer(_last_user_text(body))
        if isinstance(step, Failure):
            return self._refuse(step.status, step.type, step.message)
        if isinstance(step, Events):
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await resp.prepare(request)
            await resp.write(b"".join(f"data: {data}\n\n".encode() for data in step.data))
            return resp
        return await self._stream(request, body, step)

    async def _stream(self, request: web.Request, body: dict[str, Any], step: Answer | Overloaded
                      ) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)

        async def send(kind: str, **data: Any) -> None:
            await resp.write(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode())

        await send("message_start", message={"id": "msg_fake", "type": "message", "role": "assistant",
                                             "model": body["model"], "content": [], "stop_reason": None,
                                             "usage": {**self._input_usage(body), "output_tokens": 1}})
        await send("ping")
        index, words = 0, 0
        if isinstance(step, Answer) and step.thinking:
            await send("content_block_start", index=index, content_block={"type": "thinking", "thinking": ""})
            for piece in _pieces(step.thinking):
                await send("content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": piece})
                words += 1
            await send("content_block_delta", index=index, delta={"type": "signature_delta", "signature": SIGNATURE})
            await send("content_block_stop", index=index)
            index += 1
        if step.text:
            await send("content_block_start", index=index, content_block={"type": "text", "text": ""})
            for piece in _pieces(step.text):
                await send("content_block_delta", index=index, delta={"type": "text_delta", "text": piece})
                words += 1
            await send("content_block_stop", index=index)
            index += 1
        if isinstance(step, Overloaded):
            await send("error", error={"type": "overloaded_error", "message": "Overloaded"})
            return resp
        for call_id, name, arguments in step.tools:
            block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
            await send("content_block_start", index=index, content_block=block)
            text = json.dumps(arguments)
            for i in range(0, len(text), 7):
                await send("content_block_delta", index=index,
                           delta={"type": "input_json_delta", "partial_json": text[i:i + 7]})
            await send("content_block_stop", index=index)
            index += 1
        stop = "tool_use" if step.tools else "end_turn"
        await send("message_delta", delta={"stop_reason": stop, "stop_sequence": None},
                   usage={"output_tokens": words})
        await send("message_stop")
        await asyncio.sleep(0)
        return resp

    def _input_usage(self, body: dict[str, Any]) -> dict[str, int]:
        """A quarter of the characters; a cached system prompt seen before is a cache read, else a cache write."""
        system = body.get("system") or []
        cached = "".join(b["text"] for b in system if b.get("cache_control"))
        rest = len(json.dumps(body["messages"])) // 4 + 1
        if not cached:
            return {"input_tokens": rest, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        hit = cached in self._cached
        self._cached.add(cached)
        tokens = len(cached) // 4 + 1
        return {"input_tokens": rest, "cache_creation_input_tokens": 0 if hit else tokens,
                "cache_read_input_tokens": tokens if hit else 0}


def _pieces(text: str) -> list[str]:
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]]


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            return " ".join(b.get("text", "") for b in content if b.get("type") == "text") or "(no text)"
    return "(no text)"


def _check(body: dict[str, Any]) -> str | None:
    """The 400s of the real API this client could cause."""
    if not body.get("model") or not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        return "model: Field required" if not body.get("model") else "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or messages[0].get("role") != "user":
        return "messages: first message must use the \"user\" role"
    for tool in body.get("tools") or ():
        if not TOOL_NAME.fullmatch(str(tool.get("name"))) or "input_schema" not in tool:
            return "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"
    thinking = body.get("thinking")
    if thinking and not 1024 <= thinking.get("budget_tokens", 0) < body["max_tokens"]:
        return "thinking.budget_tokens: must be ≥ 1024 and less than max_tokens"
    if thinking and "temperature" in body:
        return "temperature may only be set to 1 when thinking is enabled"
    return _check_turns(messages, bool(thinking))


def _check_turns(messages: list[dict[str, Any]], thinking: bool) -> str | None:
    asked: set[str] = set()
    for n, message in enumerate(messages):
        blocks = message["content"] if isinstance(message["content"], list) else []
        if message["role"] == "assistant":
            asked = {b["id"] for b in blocks if b.get("type") == "tool_use"}
            if thinking and asked and (blocks[0].get("type") != "thinking" or blocks[0].get("signature") != SIGNATURE):
                return (f"messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                        f"`{blocks[0].get('type')}`. When `thinking` is enabled, a final `assistant` message must "
                        "start with a thinking block")
            continue
        for block in blocks:
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                return (f"messages.{n}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                        "`tool_use` block in the previous message.")
    return None
