"""Socket Mode on the fake Slack: apps.connections.open hands out a one-use WebSocket URL for the app whose
token asked; the socket says hello, then carries that app's envelopes (events_api, slash_commands, interactive)
that it must ack by envelope id within 3 seconds. An envelope not acked when its socket goes away is delivered
again on the app's next one, with retry_attempt raised, as Slack does; `refresh` asks the app to reconnect,
`drop` cuts the socket.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.slack_rules import CALLER, MAIN_APP, SlackApp

ACK_DEADLINE = 3.0


@dataclass
class Envelope:
    id: str
    kind: str  # "events_api" | "slash_commands" | "interactive"
    payload: dict[str, Any]
    app: str = MAIN_APP.app_id  # the app it is for
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
        self.connections = 0  # sockets opened so far, by every app
        self.connected = asyncio.Event()  # the main app's socket is open
        self._tickets: dict[str, str] = {}  # one-use ticket → the app it lets in
        self._sockets: dict[str, web.WebSocketResponse] = {}  # app id → its open socket
        self._ids = itertools.count(1)

    def add_socket_routes(self, app: web.Application) -> None:
        app.router.add_get("/link/", self._link)

    def m_apps_connections_open(self, _params: dict[str, Any]) -> dict[str, Any]:
        ticket = f"ticket-{next(self._ids)}"
        self._tickets[ticket] = CALLER.get().app_id
        return {"url": f"ws://127.0.0.1:{self.port}/link/?ticket={ticket}"}

    def linked(self, app: SlackApp = MAIN_APP) -> bool:
        socket = self._sockets.get(app.app_id)
        return socket is not None and not socket.closed

    async def _link(self, request: web.Request) -> web.StreamResponse:
        app = self._tickets.pop(request.query.get("ticket", ""), None)  # a URL serves one connection
        if app is None:
            raise web.HTTPUnauthorized(text="invalid ticket")
        socket = web.WebSocketResponse(autoping=True)
        await socket.prepare(request)
        self._sockets[app] = socket
        self.connections += 1
        await socket.send_json({"type": "hello", "num_connections": 1,
                                "connection_info": {"app_id": app},
                                "debug_info": {"approximate_connection_time": 3600}})
        self._connected(app, True)
        for envelope in self.envelopes.values():
            if envelope.app == app and envelope.acked_at is None:  # not acked on the socket that died: again
                await self._send(socket, envelope)
        async for frame in socket:
            if frame.type == WSMsgType.TEXT:
                self._ack(json.loads(frame.data))
        if self._sockets.get(app) is socket:
            del self._sockets[app]
            self._connected(app, False)
        return socket

    def _connected(self, app: str, up: bool) -> None:
        if app == MAIN_APP.app_id:
            (self.connected.set if up else self.connected.clear)()

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

    async def push(self, kind: str, payload: dict[str, Any], app: SlackApp = MAIN_APP) -> Envelope:
        """Deliver an envelope on the app's open socket (or on its next one, if none is open)."""
        envelope = Envelope(f"env-{next(self._ids)}", kind, payload, app.app_id)
        self.envelopes[envelope.id] = envelope
        socket = self._sockets.get(app.app_id)
        if socket is not None and not socket.closed:
            await self._send(socket, envelope)
        return envelope

    async def acked(self, envelope: Envelope, within: float = ACK_DEADLINE) -> Envelope:
        """The envelope once acked; fails the test when Slack would have given up on it."""
        try:
            await asyncio.wait_for(envelope.done.wait(), within)
        except TimeoutError:
            raise AssertionError(f"envelope {envelope.id} not acked within {within}s") from None
        return envelope

    async def refresh(self, app: SlackApp = MAIN_APP) -> None:
        """Slack's periodic "please reconnect": the app opens a new socket, then this one closes."""
        socket = self._sockets.get(app.app_id)
        if socket is not None:
            await socket.send_json({"type": "disconnect", "reason": "refresh_requested",
                                    "debug_info": {"host": "fake"}})

    async def drop(self, app: SlackApp = MAIN_APP) -> None:
        """The socket dies without a goodbye (a network cut, a restart on Slack's side)."""
        socket = self._sockets.pop(app.app_id, None)
        if socket is not None:
            self._connected(app.app_id, False)
            await socket.close(code=1011)

    async def close_sockets(self) -> None:
        for app in list(self._sockets):
            socket = self._sockets.pop(app)
            self._connected(app, False)
            await socket.close(code=1011)
