"""Stream mode: the gateway's connection endpoint, then one WebSocket of JSON frames, routed and acknowledged
by the official dingtalk-stream SDK (its handlers, frames and ACKs).

The SDK's own `start()` opens the connection with blocking `requests` and sleeps 10 s after any drop, so this
module does the two network steps itself (the endpoint over our aiohttp session, the socket with
`websockets`, which the SDK is built on) and hands every frame to `DingTalkStreamClient.route_message`. A
robot message is acknowledged only once the hub has it: an un-ACKed one is pushed again after a reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote_plus

import aiohttp
import dingtalk_stream
import websockets
from dingtalk_stream import AckMessage, CallbackHandler, CallbackMessage, ChatbotMessage

from adapters.dingtalk.transport import ApiError, DingTalkHttp

log = logging.getLogger(__name__)

OPEN_PATH = "/v1.0/gateway/connections/open"
CARD_TOPIC = CallbackHandler.TOPIC_CARD_CALLBACK
BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0)  # seconds before reconnect attempt n (the last repeats)
STOP_GRACE = 2.0  # seconds frames being taken in get at stop to reach the hub and be ACKed
Take = Callable[[dict[str, Any], str], Awaitable[None]]  # (frame data, frame id)


class Refused(Exception):
    """The gateway refused the credentials: no retry will help."""


class _Topic(CallbackHandler):  # type: ignore[misc]
    """One subscribed topic: the frame's data goes to `take`; the SDK builds the ACK from what this returns."""

    def __init__(self, take: Take) -> None:
        super().__init__()
        self._take = take

    async def process(self, message: CallbackMessage) -> tuple[int, str]:
        try:
            await self._take(message.data, str(message.headers.message_id or ""))
        except Exception:
            log.exception("dingtalk: a %s frame could not be taken in", message.headers.topic)
            return AckMessage.STATUS_SYSTEM_EXCEPTION, "error"  # not ACKed as done: DingTalk pushes it again
        return AckMessage.STATUS_OK, "OK"


class StreamConnection:
    pause: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)

    def __init__(self, http: DingTalkHttp, client_secret: str, on_message: Take, on_card: Take) -> None:
        self._http = http
        self._secret = client_secret
        self._client = dingtalk_stream.DingTalkStreamClient(
            dingtalk_stream.Credential(http.client_id, client_secret), logger=log)
        self._client.register_callback_handler(ChatbotMessage.TOPIC, _Topic(on_message))
        self._client.register_callback_handler(CARD_TOPIC, _Topic(on_card))
        self._client.pre_start()
        self._runner: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._frames: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Open the first connection here, so bad credentials fail the start; later drops reconnect."""
        uri = await self._open()
        self._runner = asyncio.create_task(self._run(uri), name="dingtalk-stream")
        waiter = asyncio.create_task(self._connected.wait())
        await asyncio.wait({waiter, self._runner}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self._runner.done():
            self._runner.result()

    async def stop(self) -> None:
        """Frames being taken in get STOP_GRACE to reach the hub and be ACKed while the socket is still open
        (one cancelled un-ACKed is pushed again only after a reconnect); what hangs is cancelled."""
        if self._frames:
            await asyncio.wait(set(self._frames), timeout=STOP_GRACE)
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Refused):  # Refused: why it ended, logged then
                await self._runner
        for task in set(self._frames):
            task.cancel()
        await asyncio.gather(*self._frames, return_exceptions=True)
        self._runner = None
        self._connected.clear()

    def is_connected(self) -> bool:
        return self._connected.is_set()

    async def _open(self) -> str:
        """The gateway's endpoint and one-time ticket, as the SDK's `open_connection` asks for them."""
        topics = [{"type": "CALLBACK", "topic": topic} for topic in self._client.callback_handler_map]
        body = {"clientId": self._http.client_id, "clientSecret": self._secret, "subscriptions": topics,
                "ua": f"bothub dingtalk-stream/{dingtalk_stream.version.VERSION_STRING}", "localIp": ""}
        async with self._http.session.post(self._http.api_base + OPEN_PATH, json=body) as resp:
            data = await resp.json(content_type=None)
            if resp.status in (400, 401, 403):
                raise Refused(f"{data.get('code', resp.status)}: {data.get('message', '')}")
            if resp.status >= 300:
                raise ApiError(resp.status, str(data.get("code", "")), str(data.get("message", "")))
        return f"{data['endpoint']}?ticket={quote_plus(str(data['ticket']))}"

    async def _run(self, uri: str) -> None:
        failures = 0
        while True:
            try:
                await self._serve(uri)
                failures = 0
            except (OSError, websockets.WebSocketException) as e:
                log.warning("dingtalk: stream connection lost: %s", e)
            self._connected.clear()
            while True:
                await self.pause(BACKOFF[min(failures, len(BACKOFF) - 1)])
                try:
                    uri = await self._open()
                    break
                except Refused as e:
                    log.error("dingtalk: the gateway refused the credentials while reconnecting: %s", e)
                    raise
                except (ApiError, aiohttp.ClientError, TimeoutError, KeyError, ValueError) as e:
                    failures += 1
                    log.warning("dingtalk: reopening the stream failed (attempt %d): %s", failures, e)

    async def _serve(self, uri: str) -> None:
        async with websockets.connect(uri, max_size=4 * 2**20, open_timeout=15) as ws:
            self._client.websocket = ws
            self._connected.set()
            async for raw in ws:
                task = asyncio.create_task(self._route(ws, raw))
                self._frames.add(task)
                task.add_done_callback(self._frames.discard)

    async def _route(self, ws: Any, raw: str | bytes) -> None:
        """The SDK routes the frame to its handler and sends the ACK; a `disconnect` ends this socket."""
        try:
            frame = json.loads(raw)
            if not isinstance(frame, dict):
                raise ValueError("not an object")
        except ValueError:
            log.warning("dingtalk: unreadable stream frame skipped")
            return
        if self._client.websocket is not ws:
            return  # a frame of a socket already replaced
        result = await self._client.route_message(frame)
        if result == dingtalk_stream.DingTalkStreamClient.TAG_DISCONNECT:
            await ws.close()
