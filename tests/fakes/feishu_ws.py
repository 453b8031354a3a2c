"""The fake Feishu's long connection: the endpoint that hands out a websocket URL, and that websocket speaking
Feishu's protobuf frames (pings answered with pongs carrying the client settings, big events split into parts,
the connection dropped on demand). Tests can also script the endpoint's answers and push raw frames."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import WSMsgType, web

from adapters.feishu.frames import CONTROL, DATA, Frame  # checked against lark-oapi's own class in test_frames.py

BUSY = 1000040343  # the endpoint's "internal error": clients try again later


class LongConnectionGateway:
    """Mixed into FakeFeishu: `app_id`, `app_secret`, `port` and `record_endpoint_call` come from it."""

    app_id: str
    app_secret: str
    port: int

    def __init__(self) -> None:
        self.ws_acks: list[dict[str, Any]] = []
        self.ws_connected = asyncio.Event()
        self.ws_connects = 0
        self.ws_pings = 0
        self.ws_endpoint_calls = 0
        self.ws_client_config: dict[str, Any] = {"ReconnectCount": -1, "ReconnectInterval": 120,
                                                 "ReconnectNonce": 30, "PingInterval": 120}
        self.ws_handshake_refusal: dict[str, str] | None = None  # handshake-* headers of a refused upgrade
        self.ws_endpoint_answers: list[tuple[int, Any]] = []  # (HTTP status, body) answered first, in order
        self.ws_endpoint_url: str | None = None  # None: this fake's own websocket
        self._ws: web.WebSocketResponse | None = None

    def record_endpoint_call(self, request: web.Request, body: Any) -> None:
        raise NotImplementedError

    async def _ws_endpoint(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.record_endpoint_call(request, body)
        self.ws_endpoint_calls += 1
        if self.ws_endpoint_answers:
            status, answer = self.ws_endpoint_answers.pop(0)
            if isinstance(answer, str):
                return web.Response(status=status, text=answer, content_type="text/html")
            return web.json_response(answer, status=status)
        if (body.get("AppID"), body.get("AppSecret")) != (self.app_id, self.app_secret):
            return web.json_response({"code": BUSY, "msg": "app secret invalid"})
        url = self.ws_endpoint_url or f"ws://127.0.0.1:{self.port}/ws?device_id=dev-1&service_id=7"
        return web.json_response({"code": 0, "msg": "ok", "data": {"URL": url, "ClientConfig": self.ws_client_config}})

    async def _ws_handler(self, request: web.Request) -> web.StreamResponse:
        if self.ws_handshake_refusal is not None:
            return web.Response(status=403, headers=self.ws_handshake_refusal)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._ws = ws
        self.ws_connects += 1
        self.ws_connected.set()
        async for msg in ws:
            if msg.type != WSMsgType.BINARY:
                continue
            frame = Frame.decode(msg.data)
            if frame.method == DATA:  # an ack
                self.ws_acks.append(json.loads(frame.payload or b""))
            elif frame.header("type") == "ping":
                self.ws_pings += 1
                pong = Frame(service=frame.service, method=CONTROL, headers=[("type", "pong")],
                             payload=json.dumps(self.ws_client_config).encode())
                await ws.send_bytes(pong.encode())
        self.ws_connected.clear()
        return ws

    async def drop_ws(self) -> None:
        """Close the long connection from the platform's side, as a gateway restart does."""
        assert self._ws is not None, "no long connection yet"
        await self._ws.close()

    async def push_ws_raw(self, data: bytes | str) -> None:
        """Anything on the websocket: a frame's bytes, garbage, or a text message."""
        assert self._ws is not None, "no long connection yet"
        await (self._ws.send_bytes(data) if isinstance(data, bytes) else self._ws.send_str(data))

    async def push_ws_event(self, event: dict[str, Any], parts: int = 1, kind: str = "event",
                            seqs: list[int] | None = None) -> None:
        """Data frames (method=1) carrying a plaintext event, split into `parts` like Feishu splits big ones;
        `seqs` lets a test number the parts as no real gateway does."""
        payload = json.dumps(event).encode()
        size = -(-len(payload) // parts)
        for seq in range(parts):
            headers = [("type", kind), ("message_id", "m-" + event["header"]["event_id"]),
                       ("trace_id", "trace-1"), ("sum", str(parts)),
                       ("seq", str(seqs[seq] if seqs else seq))]
            frame = Frame(seq_id=1, log_id=1, service=7, method=DATA, headers=headers,
                          payload=payload[seq * size:(seq + 1) * size])
            await self.push_ws_raw(frame.encode())
