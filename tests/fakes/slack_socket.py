"""Socket Mode on the fake Slack: apps.connections.open hands out a one-use WebSocket URL; the socket says
hello, then carries envelopes (events_api, slash_commands, interactive) that the app must ack by envelope id
within 3 seconds. An envelope not acked when its socket goes away is delivered again on the next one, with
retry_attempt raised, as Slack does; `refresh` asks the app to reconnect, `drop` cuts the socket.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.slack_rules import APP_ID

ACK_DEADLINE = 3.0


@dataclass
class Envelope:
    id: str
    kind: str  # "events_api" | "slash_commands" | "interactive"
    payload: dict[str, Any]
    sent_at: float = 0.0
    attempts: int = 0
    acked_at: float | None = None
    response: dict[str, Any] | None = None  # what the ack carried back (a slash command's answer)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def ack_delay(self) -> float | None:
        return None if self.acked_at is None else self.acked_at - self.sent_at


class SocketMode:
    port: int

    def __init__(self) -> None:
        self.envelopes: dict[str, Envelope] = {}
        self.connections = 0  # sockets opened so far
        self.connected = asyncio.Event()
        self._tickets: set[str] = set()
        self._socket: web.WebSocketResponse | None = None
        self._ids = itertools.count(1)

    def add_socket_routes(self, app: web.Application) -> None:
        app.router.add_get("/link/", self._link)

    def m_apps_connections_open(self, _params: dict[str, Any]) -> dict[str, Any]:
        ticket = f"ticket-{next(self._ids)}"
        self._tickets.add(ticket)
        return {"url": f"ws://127.0.0.1:{self.port}/link/?ticket={ticket}"}

    async def _link(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:
            raise web.HTTPUnauthorized(text="invalid ticket")
        self._tickets.discard(ticket)  # a URL serves one connection
        socket = web.WebSocketResponse(autoping=True)
        await socket.prepare(request)
        self._socket = socket
        self.connections += 1
        await socket.send_json({"type": "hello", "num_connections": 1,
                                "connection_info": {"app_id": APP_ID},
                                "debug_info": {"approximate_connection_time": 3600}})
        self.connected.set()
        for envelope in self.envelopes.values():
            if envelope.acked_at is None:  # not acked on the socket that died: again, marked as a retry
                await self._send(socket, envelope)
        async for frame in socket:
            if frame.type == WSMsgType.TEXT:
                self._ack(json.loads(frame.data))
        if self._socket is socket:
            self._socket = None
            self.connected.clear()
        return socket

    def _ack(self, message: dict[str, Any]) -> None:
        envelope = self.envelopes.get(str(message.get("envelope_id", "")))
        if envelope is None or envelope.acked_at is not None:
            return
        envelope.acked_at = time.monotonic()
        payload = message.get("payload")
        envelope.response = payload if isinstance(payload, dict) else None
        envelope.done.set()

    async def _send(self, socket: web.WebSocketResponse, envelope: Envelope) -> None:
        envelope.sent_at = time.monotonic()
        await socket.send_json({"envelope_id": envelope.id, "type": envelope.kind, "payload": envelope.payload,
                                "accepts_response_payload": envelope.kind != "events_api",
                                "retry_attempt": envelope.attempts,
                                "retry_reason": "timeout" if envelope.attempts else ""})
        envelope.attempts += 1

    async def push(self, kind: str, payload: dict[str, Any]) -> Envelope:
        """Deliver an envelope on the open socket (or on the next one, if none is open)."""
        envelope = Envelope(f"env-{next(self._ids)}", kind, payload)
        self.envelopes[envelope.id] = envelope
        if self._socket is not None and not self._socket.closed:
            await self._send(self._socket, envelope)
        return envelope

    async def acked(self, envelope: Envelope, within: float = ACK_DEADLINE) -> Envelope:
        """The envelope once acked; fails the test when Slack would have given up on it."""
        try:
            await asyncio.wait_for(envelope.done.wait(), within)
        except TimeoutError:
            raise AssertionError(f"envelope {envelope.id} not acked within {within}s") from None
        return envelope

    async def refresh(self) -> None:
        """Slack's periodic "please reconnect": the app opens a new socket, then this one closes."""
        if self._socket is not None:
            await self._socket.send_json({"type": "disconnect", "reason": "refresh_requested",
                                          "debug_info": {"host": "fake"}})

    async def drop(self) -> None:
        """The socket dies without a goodbye (a network cut, a restart on Slack's side)."""
        if self._socket is not None:
            socket, self._socket = self._socket, None
            self.connected.clear()
            await socket.close(code=1011)

    async def close_sockets(self) -> None:
        await self.drop()

