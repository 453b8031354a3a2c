"""The fake DingTalk Stream gateway: connections/open (client id + secret → endpoint + one-time ticket) and
the WebSocket of JSON frames the dingtalk-stream SDK speaks.

Frames are {"specVersion", "type": SYSTEM|EVENT|CALLBACK, "headers": {..., "messageId", "topic"}, "data":
JSON text}; every CALLBACK and SYSTEM ping must be answered by an ACK frame {"code", "headers": {"messageId"},
"message", "data"}. A CALLBACK not ACKed with code 200 is pushed again after `redeliver_after` seconds and on
the next connection, as DingTalk does.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

ROBOT_TOPIC = "/v1.0/im/bot/messages/get"
CARD_TOPIC = "/v1.0/card/instances/callback"


@dataclass
class Pushed:
    frame: dict[str, Any]
    sent_at: list[float] = field(default_factory=list)
    acked: dict[str, Any] | None = None


class Gateway:
    """Mixed into FakeDingTalk; it owns the credentials check (`check_client`) and the web app."""

    client_id: str
    client_secret: str
    port: int

    def __init__(self) -> None:
        self.redeliver_after = 3.0
        self.pushed: dict[str, Pushed] = {}
        self.acks: list[dict[str, Any]] = []
        self.opens: list[dict[str, Any]] = []
        self.ws_connects = 0
        self.ws_connected = asyncio.Event()
        self.socket_refusals = 0  # upgrades still to refuse with 503 (a gateway node going away)
        self._tickets: set[str] = set()
        self._frame_ids = itertools.count(1)
        self._ws: web.WebSocketResponse | None = None
        self._redelivery: set[asyncio.Task[None]] = set()

    def gateway_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1.0/gateway/connections/open", self._open)
        app.router.add_get("/stream", self._socket)

    def scripted(self, path: str) -> web.Response | None:
        raise NotImplementedError

    async def _open(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.opens.append(body)
        scripted = self.scripted(request.path)
        if scripted is not None:
            return scripted
        if body.get("clientId") != self.client_id or body.get("clientSecret") != self.client_secret:
            return web.json_response({"code": "InvalidClient", "message": "clientId or clientSecret wrong"},
                                     status=401)
        topics = body.get("subscriptions")
        if not isinstance(topics, list) or not topics:
            return web.json_response({"code": "InvalidParameter", "message": "subscriptions"}, status=400)
        ticket = f"ticket-{next(self._frame_ids)}"
        self._tickets.add(ticket)
        return web.json_response({"endpoint": f"ws://127.0.0.1:{self.port}/stream", "ticket": ticket})

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:
            return web.json_response({"code": "InvalidTicket"}, status=403)
        self._tickets.discard(ticket)  # one connection per ticket
        if self.socket_refusals:
            self.socket_refusals -= 1
            return web.json_response({"code": "ServiceUnavailable"}, status=503)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        if self._ws is not None:
            await self._ws.close()
        self._ws = ws
        self.ws_connects += 1
        self.ws_connected.set()
        for pushed in self.pushed.values():  # what the last connection left un-ACKed
            if pushed.acked is None:
                await self._send(pushed)
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                self._ack(json.loads(msg.data))
        if self._ws is ws:
            self._ws = None
            self.ws_connected.clear()
        return ws

    def _ack(self, frame: dict[str, Any]) -> None:
        self.acks.append(frame)
        frame_id = frame.get("headers", {}).get("messageId", "")
        pushed = self.pushed.get(frame_id)
        if pushed is not None and frame.get("code") == 200:
            pushed.acked = frame

    async def push(self, topic: str, data: dict[str, Any], kind: str = "CALLBACK", frame_id: str = "") -> str:
        """Send one frame on the live socket; returns its messageId (reused by a redelivery)."""
        frame_id = frame_id or f"frame-{next(self._frame_ids)}"
        headers = {"appId": "fake-app", "connectionId": f"conn-{self.ws_connects}", "contentType": "application/json",
                   "messageId": frame_id, "time": str(int(time.time() * 1000)), "topic": topic}
        frame = {"specVersion": "1.0", "type": kind, "headers": headers, "data": json.dumps(data, ensure_ascii=False)}
        pushed = Pushed(frame)
        self.pushed[frame_id] = pushed
        await self._send(pushed)
        if kind == "CALLBACK":
            task = asyncio.create_task(self._redeliver(pushed))
            self._redelivery.add(task)
            task.add_done_callback(self._redelivery.discard)
        return frame_id

    async def send_raw(self, data: str) -> None:
        """A text frame exactly as given (odd ones included) on the live socket."""
        assert self._ws is not None, "no stream connection"
        await self._ws.send_str(data)

    async def ping(self) -> str:
        return await self.push("ping", {"opaque": f"op-{next(self._frame_ids)}"}, kind="SYSTEM")

    async def ask_disconnect(self) -> None:
        """DingTalk's SYSTEM disconnect: the client must ACK, close, and open a new connection."""
        await self.push("disconnect", {"reason": "server restarting"}, kind="SYSTEM")

    async def drop(self) -> None:
        """The network cut the socket."""
        if self._ws is not None:
            await self._ws.close()

    def acked(self, frame_id: str) -> dict[str, Any] | None:
        return self.pushed[frame_id].acked

    async def until_acked(self, frame_id: str, within: float = 5.0) -> dict[str, Any]:
        deadline = time.monotonic() + within
        while (ack := self.pushed[frame_id].acked) is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"frame {frame_id} never ACKed")
            await asyncio.sleep(0.01)
        return ack

    async def _send(self, pushed: Pushed) -> None:
        if self._ws is not None and not self._ws.closed:
            pushed.sent_at.append(time.monotonic())
            await self._ws.send_str(json.dumps(pushed.frame))

    async def _redeliver(self, pushed: Pushed) -> None:
        while pushed.acked is None and len(pushed.sent_at) < 4:
            await asyncio.sleep(self.redeliver_after)
            if pushed.acked is None:
                await self._send(pushed)

    async def stop_gateway(self) -> None:
        for task in set(self._redelivery):
            task.cancel()
        await asyncio.gather(*self._redelivery, return_exceptions=True)
        if self._ws is not None:
            await self._ws.close()
