"""HTTP API lifecycle and its one endpoint: authenticate, limit, parse, then answer as JSON, SSE or callback."""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Coroutine
from typing import Any

from aiohttp import web

from adapters.api.callbacks import Callbacks
from adapters.api.config import ApiConfig
from adapters.api.inbound import PLATFORM, ApiRequest, BadRequest, parse
from adapters.api.limits import RateLimits
from adapters.api.outbound import Exchange, Exchanges
from bot.adapter import AdapterServices, Capabilities, FileTransfer, MessageHandler, NotKept
from bot.httpkit import sse
from bot.httpkit.netguard import Refused
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

ROUTE = "/api/v1/chat/{conversation_key}/messages"


def _bearer(request: web.Request) -> str:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _error(status: int, text: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": text}, status=status, headers=headers)


def _not_kept() -> web.Response:
    return _error(503, "the message could not be stored; send it again", {"Retry-After": "1"})


class ApiAdapter:
    name = PLATFORM
    # no platform limits: one reply is one JSON string (no splitting), and edits only feed SSE streams
    capabilities = Capabilities(
        max_text=1_000_000, can_edit=True, edit_interval=0.1, group_edit_interval=0.1, buttons=True, feedback=False,
        groups=False, overhears=False, refuses_sends=False,  # one to one only; sending never fails
        tree_budget=20_000, burst=10_000, rate=1000.0, group_send_window=None, chat_send_window=None,
        global_window=(100_000, 1.0),
 edit_window=None,
 send_window=None,
        threads_paced_apart=False, interactions_paced_apart=False, replace_pressed=False, closes_streams=False,
        restart_when_down=False,
        reorders=False,
        columns=0,
    )

    def __init__(self, cfg: ApiConfig, services: AdapterServices) -> None:
        self._cfg = cfg
        self._check_token = services.check_token
        self._answered = services.answered
        self._history = services.history
        self._exchanges = Exchanges(services.relay)
        self._limits = RateLimits(cfg.burst, cfg.requests_per_minute / 60)
        self._callbacks = Callbacks(cfg.callback_allow_hosts, cfg.callback_timeout, cfg.callback_attempts,
                                    cfg.callback_backoff)
        self._tasks: set[asyncio.Task[None]] = set()
        self._on_message: MessageHandler | None = None
        services.add_route("POST", ROUTE, self._post)

    @property
    def files(self) -> FileTransfer | None:
        return None

    def connected(self) -> bool:
        return self._on_message is not None

    async def start(self, on_message: MessageHandler) -> None:
        self._on_message = on_message

    async def stop(self) -> None:
        """The hub has finished its answers by now: callbacks still being posted get one attempt's time."""
        self._on_message = None
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=self._cfg.callback_timeout)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        ref = SentRef(chat, uuid.uuid4().hex)
        await self._exchanges.update(chat, ref.message_id, reply, final)
        return ref

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        await self._exchanges.update(ref.chat, ref.message_id, reply, final)

    async def typing(self, chat: ChatRef) -> None:
        return None

    async def _post(self, request: web.Request) -> web.StreamResponse:
        if self._on_message is None or self._check_token is None or self._answered is None:
            return _error(503, "the HTTP API is not running")
        token = _bearer(request)
        holder = await self._check_token(token) if token else None
        if holder is None:
            return _error(401, "unknown or revoked API token: send Authorization: Bearer <token>",
                          {"WWW-Authenticate": 'Bearer realm="bothub"'})
        if wait := self._limits.take(holder.id):
            return _error(429, f"too many requests with this token; retry in {math.ceil(wait)} s",
                          {"Retry-After": str(math.ceil(wait))})
        key = request.match_info["conversation_key"]
        try:
            asked = parse(holder, key, await self._body(request))
            if asked.callback_url is not None:
                await self._callbacks.check(asked.callback_url)
        except BadRequest as e:
            return _error(400, str(e))
        except Refused as e:
            return _error(400, f"callback_url refused: {e}")
        if "text/event-stream" in request.headers.get("Accept", "") and asked.callback_url is None:
            return await self._stream(request, key, asked)
        exchange = self._exchanges.open(key, asked.message)
        if not await self._kept(exchange, asked.message):  # else the hub holds it (in its inbox) from here on
            return _not_kept()
        if asked.callback_url is not None:
            self._spawn(self._call_back(exchange, asked.callback_url, holder.signing_key))
            return web.json_response({"conversation_key": key, "message_id": asked.message.message_id,
                                      "status": "accepted"}, status=202)
        try:
            complete = await self._answer(exchange)
        finally:
            self._exchanges.close(exchange)
        return web.json_response(exchange.result(complete), status=200 if complete else 504)

    async def _body(self, request: web.Request) -> bytes:
        """The body, refused past max_body_bytes without reading the rest into memory."""
        limit = self._cfg.max_body_bytes
        if (request.content_length or 0) > limit:
            raise BadRequest(f"the body is larger than {limit} bytes")
        body = bytearray()
        while chunk := await request.content.read(limit + 1 - len(body)):  # a chunked body has no length
            body += chunk
            if len(body) > limit:
                raise BadRequest(f"the body is larger than {limit} bytes")
        return bytes(body)

    async def _answer(self, exchange: Exchange) -> bool:
        """Wait until the hub answered the message; False when reply_timeout cut the wait."""
        assert self._answered is not None
        try:
            await asyncio.wait_for(self._answered(exchange.message.chat), self._cfg.reply_timeout)
        except TimeoutError:
            return False
        if self._history is not None:  # the stored answer names its run: the caller can ask for its trace
            stored = (await self._history(exchange.message.chat, None, 1)).messages
            if stored and stored[-1].role == "assistant":
                exchange.trace_id = stored[-1].trace_id
        return True

    async def _stream(self, request: web.Request, key: str, asked: ApiRequest) -> web.StreamResponse:
        """Each send and edit as a `reply` event while the answer grows, then `done` with the whole result."""
        assert self._on_message is not None
        queue: asyncio.Queue[str | None] = asyncio.Queue(sse.QUEUE_LIMIT)
        exchange = self._exchanges.open(key, asked.message, queue)
        if not await self._kept(exchange, asked.message):
            return _not_kept()

        async def finish() -> None:
            complete = await self._answer(exchange)
            if sse.offer(queue, sse.frame("done", exchange.result(complete))):
                sse.finish(queue)

        task = self._spawn(finish())
        try:
            return await sse.serve(request, queue)
        finally:
            task.cancel()
            self._exchanges.close(exchange)

    async def _kept(self, exchange: Exchange, message: IncomingMessage) -> bool:
        """False (the exchange closed) when the hub could not keep the message: nothing will answer it."""
        assert self._on_message is not None
        try:
            await self._on_message(message)
        except NotKept:
            self._exchanges.close(exchange)
            return False
        return True

    async def _call_back(self, exchange: Exchange, url: str, signing_key: str) -> None:
        try:
            complete = await self._answer(exchange)
        finally:
            self._exchanges.close(exchange)
        await self._callbacks.deliver(url, exchange.result(complete), signing_key)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
