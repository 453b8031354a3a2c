"""A scripted Gemini API (`models/{model}:streamGenerateContent?alt=sse`) on 127.0.0.1: its SSE chunks, its
error bodies, and the checks the real API makes (the key, roles, a function response right after its call).

Each request pops the next step; with none left it echoes the last user text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.serve import serve_local

API_KEY = "gemini-test-key"


@dataclass(frozen=True)
class Reply:
    """Stream `thought` (as thought-summary parts, when given), `text` word by word, then each function call."""

    text: str = ""
    thought: str = ""
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()  # (name, args)


@dataclass(frozen=True)
class Refuse:
    """An error as the API words it: {"error": {"code", "message", "status"}}."""

    code: int
    status: str
    message: str = "scripted error"


@dataclass
class FakeGemini:
    api_key: str = API_KEY
    requests: list[dict[str, Any]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    _steps: list[Reply | Refuse] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1beta"

    def script(self, *steps: Reply | Refuse) -> None:
        self._steps.extend(steps)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1beta/models/{target}", self._generate)
        self._runner, self.port = await serve_local(app, 0, handler_cancellation=True, shutdown_timeout=1.0)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _refuse(self, step: Refuse) -> web.Response:
        self.refusals.append(step.message)
        return web.json_response({"error": {"code": step.code, "message": step.message, "status": step.status}},
                                 status=step.code)

    async def _generate(self, request: web.Request) -> web.StreamResponse:
        model, _, method = request.match_info["target"].partition(":")
        body = await request.json()
        self.requests.append({"model": model, "body": body, "headers": dict(request.headers),
                              "query": dict(request.query)})
        if method != "streamGenerateContent" or request.query.get("alt") != "sse":
            return self._refuse(Refuse(404, "NOT_FOUND", f"method {method} not found"))
        if request.headers.get("x-goog-api-key") != self.api_key:
            return self._refuse(Refuse(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."))
        if problem := _check(body.get("contents")):
            return self._refuse(Refuse(400, "INVALID_ARGUMENT", problem))
        step = self._steps.pop(0) if self._steps else Reply(_last_user_text(body["contents"]))
        if isinstance(step, Refuse):
            return self._refuse(step)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        prompt = len(json.dumps(body)) // 4 + 1
        pieces = [{"text": w, "thought": True} for w in _words(step.thought)] + [{"text": w} for w in
                                                                                  _words(step.text)]
        pieces += [{"functionCall": {"name": name, "args": args}} for name, args in step.calls]
        for n, part in enumerate(pieces):
            last = n == len(pieces) - 1
            candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
            chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
            if last:
                candidate["finishReason"] = "STOP"
                chunk["usageMetadata"] = {"promptTokenCount": prompt, "candidatesTokenCount": len(_words(step.text)),
                                          "thoughtsTokenCount": len(_words(step.thought)),
                                          "totalTokenCount": prompt + len(pieces)}
            await resp.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
        return resp


def _words(text: str) -> list[str]:
    if not text:
        return []
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]]


def _last_user_text(contents: list[dict[str, Any]]) -> str:
    for turn in reversed(contents):
        texts = [p["text"] for p in turn["parts"] if "text" in p]
        if turn["role"] == "user" and texts:
            return " ".join(texts)
    return "(no text)"


def _check(contents: Any) -> str | None:
    if not isinstance(contents, list) or not contents:
        return "* GenerateContentRequest.contents: contents is not specified"
    asked: list[str] = []
    for turn in contents:
        if turn.get("role") not in ("user", "model"):
            return f"Please use a valid role: user, model. (got {turn.get('role')!r})"
        answered = [p["functionResponse"]["name"] for p in turn["parts"] if "functionResponse" in p]
        if answered and sorted(answered) != sorted(asked):
            return ("Please ensure that the number of function response parts is equal to the number of function "
                    "call parts of the function call turn.")
        asked = [p["functionCall"]["name"] for p in turn["parts"] if "functionCall" in p]
    return None
