"""One platform address for several apps, as the real platform has: each app (a Discord application, a Feishu
app, a DingTalk robot, a WeCom bot) is a fake of its own on its own port, strict as ever; the cloud takes every
request on one port, finds the app it belongs to by the credentials it carries (a token header, an app id in the
body, a socket's first frame) and passes it on unchanged. Unknown credentials get the platform's refusal. What an
app's fake hands out afterwards (a socket URL, a download link) may point at that fake directly."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import aiohttp
from aiohttp import WSMsgType, web
from multidict import CIMultiDict, CIMultiDictProxy

from tests.fakes.serve import serve_local

# the port of the app's fake the request belongs to, or None: credentials no app has
Pick = Callable[[web.Request, bytes], int | None]
PickFrame = Callable[[str], int | None]  # the same for a socket's frame; LATER: this frame does not tell
LATER = 0
_HOP = frozenset({"host", "content-length", "transfer-encoding", "connection", "content-encoding", "keep-alive"})


class Cloud:
    def __init__(self, pick: Pick, refuse: Callable[[], web.Response], *, sockets: tuple[str, ...] = (),
                 pick_frame: PickFrame | None = None, greeting: str | None = None, refuse_close: int = 4004) -> None:
        """`sockets`: paths of websockets routed by their first client frame (`pick_frame`); `greeting`: the frame
        the platform sends first (Discord's HELLO), sent here and the app's own copy dropped."""
        self._pick, self._refuse, self._sockets = pick, refuse, sockets
        self._pick_frame, self._greeting, self._refuse_close = pick_frame, greeting, refuse_close
        self.refused: list[str] = []  # paths of requests with unknown credentials (a failed credential check)
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(auto_decompress=False)
        app = web.Application(client_max_size=64 * 2**20)
        for path in self._sockets:
            app.router.add_get(path, self._socket)
        app.router.add_route("*", "/{tail:.*}", self._http)
        self._runner, self.port = await serve_local(app)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _http(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        body = await request.read()
        port = self._pick(request, body)
        if port is None:
            self.refused.append(request.path)
            return self._refuse()
        async with self._session.request(request.method, f"http://127.0.0.1:{port}{request.path_qs}",
                                          headers=_end_to_end(request.headers), data=body,
                                          allow_redirects=False) as answer:
            return web.Response(status=answer.status, body=await answer.read(), headers=_end_to_end(answer.headers))

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        assert self._session is not None and self._pick_frame is not None
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        if self._greeting is not None:
            await ws.send_str(self._greeting)
        early: list[str] = []  # frames before the one that tells whose socket it is (a heartbeat before IDENTIFY)
        port: int | None = LATER
        while port == LATER:
            first = await ws.receive()
            port = self._pick_frame(first.data) if first.type == WSMsgType.TEXT else None
            early.append(first.data)
        if port is None:
            self.refused.append(request.path)
            await ws.close(code=self._refuse_close, message=b"Authentication failed.")
            return ws
        async with self._session.ws_connect(f"ws://127.0.0.1:{port}{request.path_qs}", autoping=True) as up:
            if self._greeting is not None:
                await up.receive()  # the app's own greeting: the client had the cloud's
            for frame in early:
                await up.send_str(frame)
            ends = [asyncio.create_task(_pump(ws, up)), asyncio.create_task(_pump(up, ws))]
            await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
            for end in ends:
                end.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await end
            code = up.close_code if up.closed else ws.close_code
            await ws.close(code=code or 1000)
        return ws


async def _pump(source: web.WebSocketResponse | aiohttp.ClientWebSocketResponse,
                sink: web.WebSocketResponse | aiohttp.ClientWebSocketResponse) -> None:
    async for message in source:
        if message.type == WSMsgType.TEXT:
            await sink.send_str(message.data)
        elif message.type == WSMsgType.BINARY:
            await sink.send_bytes(message.data)


def _end_to_end(headers: CIMultiDictProxy[str]) -> CIMultiDict[str]:
    return CIMultiDict((k, v) for k, v in headers.items() if k.lower() not in _HOP)
