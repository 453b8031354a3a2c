"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 that speaks the real SSE protocol.

The real `openai` SDK runs against it unchanged, so tests and benchmarks exercise our client code,
not a mock. Each POST pops the next scripted step; with an empty script a default responder echoes the
last user message word by word (benchmarks tune its delays). Every request body and header is recorded.
Self-contained on purpose (aiohttp only): other suites, benchmarks and a subprocess CLI import it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import json
import re
import signal
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.ops import eventloop
from tests.fakes.openai_embeddings import FakeEmbeddings
from tests.fakes.openai_rules import Refusal, check_key, check_request
from tests.fakes.openai_speech import FakeSpeech
from tests.fakes.serve import serve_local

MODEL = "fake-model"
API_KEY = "test-key"  # what the fake accepts unless told otherwise


@dataclass(frozen=True)
class Text:
    """Stream `text`: one chunk per word by default, or `chunks` roughly equal pieces."""

    text: str
    chunks: int | None = None
    delay: float = 0.0  # seconds between chunks
    first_token_delay: float = 0.0  # seconds after the role chunk, before the first content


@dataclass(frozen=True)
class ToolCalls:
    """Stream tool calls (id, name, arguments JSON text); arguments arrive in `fragment`-sized pieces."""

    calls: Sequence[tuple[str, str, str]]
    text: str = ""  # optional content streamed before the calls
    fragment: int = 5
    interleave: bool = False  # send fragments of parallel calls round-robin instead of one call after another


@dataclass(frozen=True)
class Error:
    """An HTTP error with the real API's JSON body; `retry_after` adds the header the SDK honours."""

    status: int
    code: str | None = None
    message: str = "scripted error"
    retry_after: float | None = None


@dataclass(frozen=True)
class Hang:
    """Sleep before sending headers (client timeouts), then answer with the default responder."""

    seconds: float


@dataclass(frozen=True)
class StreamError:
    """Stream some text, then an in-stream `data: {"error": …}` event, then close."""

    text: str = ""
    message: str = "The server had an error while processing your request."
    code: str | None = None
    type: str = "server_error"


@dataclass(frozen=True)
class Reset:
    """Stream some text, then drop the connection without ending the stream (a provider dying mid-answer)."""

    text: str = ""


@dataclass(frozen=True)
class Think:
    """Stream `reasoning` as `reasoning_content` deltas (DeepSeek, vLLM), then `text` as the answer."""

    reasoning: str
    text: str


Step = Text | ToolCalls | Error | Hang | StreamError | Reset | Think
Responder = Callable[[dict[str, Any]], Step]

_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 403: "invalid_request_error",
                404: "invalid_request_error", 429: "requests", 500: "server_error", 503: "server_error"}


def _split(text: str, chunks: int | None) -> list[str]:
    if not text:
        return []
    if chunks is None:
        words = text.split(" ")
        return [w + " " for w in words[:-1]] + ([words[-1]] if words[-1] else [])
    size = max(1, -(-len(text) // max(1, chunks)))
    return [text[i:i + size] for i in range(0, len(text), size)]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class FakeOpenAI:
    """`await start()`, point the SDK at `base_url`, queue steps with `script(...)`, inspect `requests`.

    Strict like the real API: a request without `api_key` as its bearer token gets 401 (`api_key=None`
    is a local server that accepts any key), and invalid messages or tools get 400 before any script runs.
    """

    def __init__(self, words_delay: float = 0.0, first_token_delay: float = 0.0,
                 responder: Responder | None = None, api_key: str | None = API_KEY) -> None:
        self.api_key = api_key
        self.words_delay = words_delay
        self.first_token_delay = first_token_delay
        self.responder = responder or self._echo
        self.requests: list[dict[str, Any]] = []
        self.refusals: list[Refusal] = []  # every 401/400 the rules gave, for tests to assert on
        self.hold: asyncio.Event | None = None  # when an Event: valid requests wait for it before answering
        self.hold_only: Callable[[dict[str, Any]], bool] | None = None  # …only the requests this picks
        self.extra_keys: set[str] = set()  # accepted besides api_key (a credential pool's other keys)
        self.limited_keys: dict[str, float] = {}  # key → retry-after: its requests get 429 (rate limit per key)
        self.errors_sent: list[float] = []  # time.monotonic() of each scripted error answered (failover latency)
        self._steps: list[Step] = []
        self.transcript = "this is what the voice message said"  # what /audio/transcriptions answers
        self.transcriptions: list[dict[str, Any]] = []  # model, file name and bytes of each request
        self.speech = FakeSpeech(api_key, self._refuse)  # /audio/speech
        self.embeddings = FakeEmbeddings(api_key, self._refuse)  # /embeddings
        self._runner: web.AppRunner | None = None
        self._ids = itertools.count(1)
        self.port = 0
        self.tls: ssl.SSLContext | None = None

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/v1"

    def script(self, *steps: Step) -> None:
        self._steps.extend(steps)

    @property
    def pending(self) -> int:
        """Scripted steps not yet served (a test can assert the model was asked as often as planned)."""
        return len(self._steps)

    async def start(self, port: int = 0, tls: ssl.SSLContext | None = None) -> None:
        """`tls`: serve https with this context (tests/fakes/tls.py)."""
        self.tls = tls
        app = web.Application(client_max_size=64 * 1024 * 1024)  # requests with images run to megabytes
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_post("/v1/audio/speech", self.speech.handle)
        app.router.add_post("/v1/embeddings", self.embeddings.handle)
        # handler_cancellation: a client that times out cancels our Hang instead of leaving it to sleep
        # backlog: a burst of 1000 clients connects at once
        self._runner, self.port = await serve_local(app, port, backlog=2048, ssl_context=tls,
                                                    handler_cancellation=True, shutdown_timeout=1.0)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _echo(self, body: dict[str, Any]) -> Step:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        text = _content_text(users[-1].get("content")) if users else ""
        return Text(text or "(nothing to echo)", delay=self.words_delay,
                    first_token_delay=self.first_token_delay)

    async def _models(self, request: web.Request) -> web.Response:
        if refusal := check_key(request.headers.get("Authorization"), self.api_key):
            return self._refuse(refusal)
        return web.json_response({"object": "list", "data": [
            {"id": MODEL, "object": "model", "created": 1700000000, "owned_by": "fake"}]})

    async def _transcribe(self, request: web.Request) -> web.Response:
        """The Whisper-style endpoint: multipart `file` + `model`; `response_format=text` answers plain text."""
        if refusal := check_key(request.headers.get("Authorization"), self.api_key):
            return self._refuse(refusal)
        form = await request.post()
        upload, model = form.get("file"), form.get("model")
        if not isinstance(upload, web.FileField) or not isinstance(model, str) or not model:
            return self._refuse(Refusal(400, "'file' and 'model' are required"))
        self.transcriptions.append({"model": model, "filename": upload.filename, "data": upload.file.read()})
        if form.get("response_format") == "text":
            return web.Response(text=self.transcript + "\n", content_type="text/plain")
        return web.json_response({"text": self.transcript})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return self._refuse(Refusal(400, "We could not parse the JSON body of your request."))
        self.requests.append({"body": body, "headers": dict(request.headers)})
        key = (request.headers.get("Authorization") or "").removeprefix("Bearer ")
        expected = key if key in self.extra_keys else self.api_key
        refusal = check_key(request.headers.get("Authorization"), expected) or check_request(body)
        if refusal is not None:
            self.refusals.append(refusal)
            return self._refuse(refusal)
        if key in self.limited_keys:
            return self._error_response(Error(429, "rate_limit_exceeded", "Rate limit reached for requests",
                                              retry_after=self.limited_keys[key]))
        if self.hold is not None and (self.hold_only is None or self.hold_only(body)):
            await self.hold.wait()
        step = self._steps.pop(0) if self._steps else self.responder(body)
        if isinstance(step, Hang):
            await asyncio.sleep(step.seconds)
            step = self.responder(body)
        if isinstance(step, Error):
            self.errors_sent.append(time.monotonic())
            return self._error_response(step)
        cid = f"chatcmpl-fake{next(self._ids)}"
        if not body.get("stream"):
            return self._complete(cid, step, body)
        try:
            return await self._stream(request, cid, step, body)
        except ConnectionResetError:  # the client went away mid-stream (timeouts, cancelled runs)
            return web.Response(status=499)

    @staticmethod
    def _error_response(err: Error) -> web.Response:
        headers = {"retry-after": str(err.retry_after)} if err.retry_after is not None else None
        return FakeOpenAI._refuse(Refusal(err.status, err.message, code=err.code), headers)

    @staticmethod
    def _refuse(refusal: Refusal, headers: dict[str, str] | None = None) -> web.Response:
        payload = {"error": {"message": refusal.message, "type": _ERROR_TYPES.get(refusal.status, "api_error"),
                             "param": refusal.param, "code": refusal.code}}
        return web.json_response(payload, status=refusal.status, headers=headers)

    @staticmethod
    def _usage(body: dict[str, Any], completion_pieces: int) -> dict[str, int]:
        prompt = sum(len(_content_text(m.get("content"))) for m in body["messages"]) // 4 + 1
        return {"prompt_tokens": prompt, "completion_tokens": completion_pieces,
                "total_tokens": prompt + completion_pieces}

    def _complete(self, cid: str, step: Step, body: dict[str, Any]) -> web.Response:
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        finish = "stop"
        if isinstance(step, Text | StreamError | Reset | Think):
            message["content"] = step.text
        elif isinstance(step, ToolCalls):
            message["content"] = step.text or None
            message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                     for i, n, a in step.calls]
            finish = "tool_calls"
        return web.json_response({
            "id": cid, "object": "chat.completion", "created": int(time.time()), "model": body["model"],
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": self._usage(body, len(_split(message["content"] or "", None)))})

    async def _stream(
        self, request: web.Request, cid: str, step: Step, body: dict[str, Any]
    ) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        model = body["model"]

        def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
            return {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                    "system_fingerprint": "fp_fake", "choices": choices, **extra}

        async def send(delta: dict[str, Any] | None = None, finish: str | None = None, *,
                       raw: Any = None) -> None:
            if raw is None:
                raw = chunk([{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}])
            await resp.write(f"data: {raw if isinstance(raw, str) else json.dumps(raw)}\n\n".encode())

        await send({"role": "assistant", "content": "", "refusal": None})
        pieces: list[str] = []
        if isinstance(step, Text):
            pieces = _split(step.text, step.chunks)
            if step.first_token_delay:
                await asyncio.sleep(step.first_token_delay)
            for n, piece in enumerate(pieces):
                if n and step.delay:
                    await asyncio.sleep(step.delay)
                await send({"content": piece})
            finish = "stop"
        elif isinstance(step, Reset):
            for piece in _split(step.text, None):
                await send({"content": piece})
            self.errors_sent.append(time.monotonic())
            assert request.transport is not None
            request.transport.abort()  # no final chunk, no [DONE]: the client sees the connection die
            return resp
        elif isinstance(step, Think):
            for piece in _split(step.reasoning, None):
                await send({"content": None, "reasoning_content": piece})
            pieces = _split(step.text, None)
            for piece in pieces:
                await send({"content": piece})
            finish = "stop"
        elif isinstance(step, StreamError):
            for piece in _split(step.text, None):
                await send({"content": piece})
            error = {"message": step.message, "type": step.type, "param": None, "code": step.code}
            await send(raw={"error": error})
            await resp.write_eof()
            return resp
        else:
            assert isinstance(step, ToolCalls)
            pieces = _split(step.text, None)
            for piece in pieces:
                await send({"content": piece})
            for delta in self._tool_deltas(step):
                await send({"tool_calls": [delta]})
            finish = "tool_calls"
        await send({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            await send(raw=chunk([], usage=self._usage(body, len(pieces))))
        await send(raw="[DONE]")
        await resp.write_eof()
        return resp

    @staticmethod
    def _tool_deltas(step: ToolCalls) -> list[dict[str, Any]]:
        """First delta per call: index, id, type, name; later deltas: index and an arguments fragment."""
        per_call: list[list[dict[str, Any]]] = []
        for index, (call_id, name, args) in enumerate(step.calls):
            deltas: list[dict[str, Any]] = [{"index": index, "id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]
            deltas += [{"index": index, "function": {"arguments": args[i:i + step.fragment]}}
                       for i in range(0, len(args), step.fragment)]
            per_call.append(deltas)
        if not step.interleave:
            return [d for deltas in per_call for d in deltas]
        rounds = itertools.zip_longest(*per_call)
        return [d for group in rounds for d in group if d is not None]


_SPEAKER = re.compile(r"^\[[^\]\n]*\]\s*")  # "[ann] " before a group member's words


async def _serve(port: int, words_delay: float, first_token_delay: float) -> None:
    """The benchmarks' model answers the question itself: a bot that tags the speaker in groups (bothub does)
    gets the same answer text, in the same time, as one that doesn't."""
    fake = FakeOpenAI(words_delay=words_delay, first_token_delay=first_token_delay)
    echo = fake.responder
    fake.responder = lambda body: _untagged(echo(body))
    await fake.start(port)
    print(fake.base_url, flush=True)  # the parent process reads this line to find the port
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await fake.stop()


def _untagged(step: Step) -> Step:
    return dataclasses.replace(step, text=_SPEAKER.sub("", step.text, count=1)) if isinstance(step, Text) else step


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Echoing fake OpenAI server for benchmarks.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on stdout)")
    parser.add_argument("--words-delay", type=float, default=0.0, help="seconds between streamed words")
    parser.add_argument("--first-token-delay", type=float, default=0.0, help="seconds before the first word")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        eventloop.run(_serve(args.port, args.words_delay, args.first_token_delay))


if __name__ == "__main__":
    main()
