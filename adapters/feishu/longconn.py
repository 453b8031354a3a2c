"""Feishu's long connection, on the hub's own loop: events arrive as protobuf frames over a websocket.

The protocol (as lark-oapi's ws client speaks it): POST /callback/ws/endpoint with the app's id and
secret answers a websocket URL (carrying device_id and service_id) and client settings. Data frames
carry plaintext event JSON, split into parts when large (headers sum/seq under one message_id); each
is acked by sending the frame back with {"code": 200}, plus a callback's answer (base64) under "data".
The client pings every PingInterval seconds and a pong may carry new settings. When the socket drops,
the client reconnects after a random pause of up to ReconnectNonce seconds, then every ReconnectInterval.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp

from adapters.feishu.frames import CONTROL, DATA, Frame
from adapters.feishu.inbound import obj, text
from adapters.feishu.transport import FeishuHttp

log = logging.getLogger(__name__)

ENDPOINT_PATH = "/callback/ws/endpoint"
BUSY_CODES = frozenset({1, 1000040343})  # "system busy", "internal error": the SDK tries again later too
FORBIDDEN, AUTH_FAILED, EXCEED_CONN_LIMIT = "403", "514", "1000040350"  # handshake-status / -autherrcode
PART_TTL = 5.0  # seconds the parts of a split event wait for the rest
MAX_PARTS = 64  # an event is at most a few hundred KB; a frame claiming more parts is dropped
TRANSIENT = (aiohttp.ClientError, OSError, TimeoutError, ValueError)  # worth another try

Handler = Callable[[bytes], Awaitable[dict[str, Any] | None]]  # event JSON → a callback's answer, or None


class Refused(Exception):
    """The platform refused this app (forbidden, too many connections): trying again will not help."""


@dataclass
class Settings:
    """The platform's ClientConfig (seconds), sent with the endpoint and in pongs; these are the SDK's defaults."""

    ping_interval: float = 120.0
    reconnect_interval: float = 120.0
    reconnect_nonce: float = 30.0
    reconnect_count: int = -1  # attempts after a drop; -1: forever

    def update(self, config: Any) -> None:
        names = {"PingInterval": "ping_interval", "ReconnectInterval": "reconnect_interval",
                 "ReconnectNonce": "reconnect_nonce", "ReconnectCount": "reconnect_count"}
        for key, name in names.items():
            value = config.get(key) if isinstance(config, dict) else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                setattr(self, name, int(value) if name == "reconnect_count" else max(float(value), 0.0))


class LongConnection:
    """One websocket to Feishu through the adapter's aiohttp session. `handle` returns once the event is safe
    (in the hub's inbox): only then is it acknowledged, so Feishu pushes an event again when we died before."""

    def __init__(self, http: FeishuHttp, app_id: str, app_secret: str, handle: Handler) -> None:
        self._http, self._app_id, self._app_secret, self._handle = http, app_id, app_secret, handle
        self.settings = Settings()
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._service = 0
        self._keeper: asyncio.Task[None] | None = None
        self._pinger: asyncio.Task[None] | None = None
        self._parts: dict[str, tuple[float, list[bytes | None]]] = {}
        self._answering: set[asyncio.Task[None]] = set()  # events being taken in, acknowledged when done

    def is_connected(self) -> bool:
        return self._ws is not None and not self._ws.closed

    async def start(self) -> None:
        """Connect once (Refused propagates), then keep the connection up in a task."""
        try:
            await self._connect()
        except TRANSIENT as e:
            log.warning("feishu: long connection not up yet (%s); retrying", e)
        self._keeper = asyncio.create_task(self._keep(), name="feishu-long-connection")

    async def stop(self) -> None:
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
        await self._close()

    # ---- connecting ------------------------------------------------------------------------------
    async def _keep(self) -> None:
        while True:
            if self._ws is not None:
                await self._serve(self._ws)
                await self._close()
                log.warning("feishu: long connection lost; reconnecting")
            if not await self._reconnect():
                return  # not connected: /readyz says so and the watchdog restarts the adapter

    async def _reconnect(self) -> bool:
        await asyncio.sleep(random.random() * self.settings.reconnect_nonce)  # clients don't return all at once
        attempt = 0
        while self.settings.reconnect_count < 0 or attempt < self.settings.reconnect_count:
            attempt += 1
            try:
                await self._connect()
                return True
            except Refused as e:
                log.error("feishu: long connection refused: %s", e)
                return False
            except TRANSIENT as e:
                log.warning("feishu: long connection attempt %d failed: %s", attempt, e)
            await asyncio.sleep(self.settings.reconnect_interval)
        log.error("feishu: long connection not restored after %d attempts", attempt)
        return False

    async def _connect(self) -> None:
        url = await self._endpoint()
        service = int(parse_qs(urlsplit(url).query).get("service_id", ["0"])[0])
        try:
            ws = await self._http.session.ws_connect(url)
        except aiohttp.WSServerHandshakeError as e:
            raise _handshake_error(e) from e
        self._ws, self._service = ws, service
        self._pinger = asyncio.create_task(self._ping_forever(ws), name="feishu-ping")

    async def _endpoint(self) -> str:
        body = {"AppID": self._app_id, "AppSecret": self._app_secret}
        url = self._http.base_url + ENDPOINT_PATH
        async with self._http.session.post(url, json=body, headers={"locale": "zh"}) as resp:
            try:
                answer = await resp.json(content_type=None)
            except ValueError as e:
                raise ConnectionError(f"long-connection endpoint answered HTTP {resp.status}, not JSON") from e
        code, msg = answer.get("code") if isinstance(answer, dict) else None, text(answer, "msg")
        if resp.status != 200 or code in BUSY_CODES:
            raise ConnectionError(f"long-connection endpoint: HTTP {resp.status} {msg} ({code})")
        if code != 0:
            raise Refused(f"{msg} ({code})")
        data = obj(answer, "data")
        self.settings.update(data.get("ClientConfig"))
        if not text(data, "URL"):
            raise ConnectionError("long-connection endpoint answered without a URL")
        return text(data, "URL")

    async def _close(self) -> None:
        pinger, self._pinger = self._pinger, None
        if pinger is not None:
            pinger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pinger
        ws, self._ws = self._ws, None
        if ws is not None:
            await ws.close()
        for task in list(self._answering):  # their acknowledgements can no longer be sent
            task.cancel()
        await asyncio.gather(*self._answering, return_exceptions=True)

    async def _ping_forever(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        ping = Frame(service=self._service, method=CONTROL, headers=[("type", "ping")]).encode()
        while not ws.closed:
            with contextlib.suppress(ConnectionError, aiohttp.ClientError):
                await ws.send_bytes(ping)
            await asyncio.sleep(max(self.settings.ping_interval, 1.0))

    # ---- frames ----------------------------------------------------------------------------------
    async def _serve(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for message in ws:
            if message.type != aiohttp.WSMsgType.BINARY:
                continue
            try:
                frame = Frame.decode(message.data)
            except ValueError:
                log.warning("feishu: unreadable long-connection frame skipped")
                continue
            if frame.method == CONTROL and frame.header("type") == "pong" and frame.payload:
                with contextlib.suppress(ValueError):
                    self.settings.update(json.loads(frame.payload))
            elif frame.method == DATA:
                payload = self._assemble(frame)
                # None: a part of a split event; a legacy "card" frame is left unanswered, as the SDK does
                if payload is not None and frame.header("type") == "event":
                    task = asyncio.create_task(self._answer(ws, frame, payload))  # the next frame is read meanwhile
                    self._answering.add(task)
                    task.add_done_callback(self._answering.discard)

    async def _answer(self, ws: aiohttp.ClientWebSocketResponse, frame: Frame, payload: bytes) -> None:
        started = time.monotonic()
        answer: dict[str, Any] = {"code": 200}
        try:
            result = await self._handle(payload)
            if result is not None:
                answer["data"] = base64.b64encode(json.dumps(result, ensure_ascii=False).encode()).decode()
        except Exception:
            log.exception("feishu: long-connection event could not be handled")
            answer = {"code": 500}
        frame.headers.append(("biz_rt", str(round((time.monotonic() - started) * 1000))))
        frame.payload = json.dumps(answer).encode()
        with contextlib.suppress(ConnectionError, aiohttp.ClientError):
            await ws.send_bytes(frame.encode())

    def _assemble(self, frame: Frame) -> bytes | None:
        """The whole event once every part of it arrived; None until then."""
        total, seq = _number(frame.header("sum"), 1), _number(frame.header("seq"), 0)
        if total <= 1:
            return frame.payload or b""
        now = time.monotonic()
        if total > MAX_PARTS:
            return None
        self._parts = {key: held for key, held in self._parts.items() if held[0] > now}
        _, parts = self._parts.setdefault(frame.header("message_id") or "", (now + PART_TTL, [None] * total))
        if not 0 <= seq < len(parts):
            return None
        parts[seq] = frame.payload or b""
        if any(part is None for part in parts):
            return None
        self._parts.pop(frame.header("message_id") or "", None)
        return b"".join(part or b"" for part in parts)


def _number(value: str | None, default: int) -> int:
    return int(value) if value is not None and value.isdigit() else default


def _handshake_error(e: aiohttp.WSServerHandshakeError) -> Exception:
    """The gateway explains a refused upgrade in handshake-* headers (lark-oapi reads them the same way)."""
    headers: Mapping[str, str] = e.headers or {}
    status, msg = headers.get("handshake-status", ""), headers.get("handshake-msg", "")
    if status == FORBIDDEN or (status == AUTH_FAILED and headers.get("handshake-autherrcode") == EXCEED_CONN_LIMIT):
        return Refused(f"{msg} ({status})")
    return ConnectionError(f"long-connection handshake refused: HTTP {e.status} {msg}".strip())
