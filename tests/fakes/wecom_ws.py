"""The fake WeCom AI-bot long connection: one WebSocket of JSON frames {"cmd", "headers": {"req_id"},
"body"}, each of the bot's frames answered by an ack {"headers": {"req_id"}, "errcode", "errmsg"[, "body"]}.

The bot must subscribe (bot id + secret) first, keep pinging, answer a message only on its callback's
req_id, finish a stream in time, answer events within their window. One connection per bot: a second
subscription displaces the first with a `disconnected_event`. Every frame is recorded with its time; the
per-conversation budget is both enforced (45009) and judged (budgets.py). Media it serves are encrypted
with their own aeskey, as WeCom's are.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import time
from typing import Any

from aiohttp import WSMsgType, web
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from tests.fakes import wecom_rules as rules
from tests.fakes.budgets import Judged, SlidingWindows
from tests.fakes.serve import serve_local
from tests.fakes.wecom_replies import Call, Callback, Replies


class FakeWeCom(Replies, Judged):
    def __init__(self, bot_id: str = rules.BOT_ID, secret: str = rules.SECRET) -> None:
        Judged.__init__(self)
        Replies.__init__(self)
        self.bot_id, self.secret = bot_id, secret
        self.calls: list[Call] = []
        self.callbacks: dict[str, Callback] = {}
        self.subscribed = asyncio.Event()
        self.connects = 0
        self.subscribe_within = 5.0  # seconds to send aibot_subscribe before the socket is closed
        self.idle_timeout = 60.0  # a socket without any frame this long is closed (WeCom: missed heartbeats)
        self.unanswered: set[str] = set()  # cmds taken without an ack (a connection gone dead one way)
        self.down = 0  # connection attempts still to refuse with 503 (WeCom's gateway restarting)
        self.refused = 0  # connection attempts refused so far
        self._ids = itertools.count(1)
        self._ws: web.WebSocketResponse | None = None
        self._failures: list[tuple[frozenset[str], int]] = []
        self._windows = [SlidingWindows(*limit) for limit in rules.PER_CHAT]
        self._judges = [SlidingWindows(*limit) for limit in rules.PER_CHAT]
        self._media: dict[str, bytes] = {}

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/ws", self._socket)
        app.router.add_get("/media/{id}", self._serve_media)
        self._runner, self.port = await serve_local(app)
        self.url = f"ws://127.0.0.1:{self.port}/ws"

    async def stop(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        await self._runner.cleanup()

    # ---- what tests script -------------------------------------------------------------------
    def fail(self, cmds: str | tuple[str, ...], errcode: int, times: int = 1) -> None:
        names = frozenset((cmds,) if isinstance(cmds, str) else cmds)
        self._failures.extend([(names, errcode)] * times)

    async def send_raw(self, data: str | bytes) -> None:
        """A frame exactly as given (odd ones included) on the subscribed connection."""
        await asyncio.wait_for(self.subscribed.wait(), 10)
        assert self._ws is not None
        await (self._ws.send_str(data) if isinstance(data, str) else self._ws.send_bytes(data))

    async def drop(self) -> None:
        """The server closes the connection, as after a network fault."""
        self.subscribed.clear()
        if self._ws is not None:
            await self._ws.close()

    async def push_message(self, body: dict[str, Any], req_id: str = "") -> str:
        """A message callback; returns its req_id (the same req_id and msgid again: a redelivery)."""
        rid = req_id or f"msg-{next(self._ids)}"
        chat, group = _chat_of(body)
        self.callbacks.setdefault(rid, Callback("message", chat, group, time.monotonic()))
        self.known_chats.add(chat)
        await self._push("aibot_msg_callback", rid, body)
        return rid

    async def push_event(self, body: dict[str, Any], task_id: str = "") -> str:
        rid = f"event-{next(self._ids)}"
        chat, group = _chat_of(body)
        self.callbacks[rid] = Callback(body["event"]["eventtype"], chat, group, time.monotonic(), task_id=task_id)
        await self._push("aibot_event_callback", rid, body)
        return rid

    def host_media(self, data: bytes) -> tuple[str, str]:
        """(url, aeskey) of an encrypted copy of `data`, as a message's image or file carries them."""
        key = os.urandom(32)
        pad = 32 - len(data) % 32
        enc = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
        media_id = f"m{next(self._ids)}"
        self._media[media_id] = enc.update(data + bytes([pad]) * pad) + enc.finalize()
        return f"http://127.0.0.1:{self.port}/media/{media_id}", base64.b64encode(key).decode()

    def calls_of(self, *cmds: str) -> list[Call]:
        return [c for c in self.calls if c.cmd in cmds]

    async def until(self, check: Any, within: float = 5.0) -> None:
        deadline = time.monotonic() + within
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError("the fake did not see what the test waited for")
            await asyncio.sleep(0.01)

    # ---- the socket --------------------------------------------------------------------------
    async def _push(self, cmd: str, rid: str, body: dict[str, Any]) -> None:
        await asyncio.wait_for(self.subscribed.wait(), 10)
        assert self._ws is not None
        await self._ws.send_str(json.dumps({"cmd": cmd, "headers": {"req_id": rid}, "body": body}))

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if self.down > 0:
            self.down -= 1
            self.refused += 1
            return web.Response(status=503, text="service unavailable")
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.connects += 1
        subscribed = False
        try:
            while True:
                try:
                    msg = await ws.receive(self.idle_timeout if subscribed else self.subscribe_within)
                except TimeoutError:
                    break
                if msg.type != WSMsgType.TEXT:
                    break
                frame = json.loads(msg.data)
                rid = str(frame.get("headers", {}).get("req_id", ""))
                cmd, body = str(frame.get("cmd", "")), frame.get("body") or {}
                if not subscribed:
                    if cmd != "aibot_subscribe":
                        break
                    code = rules.OK if (body.get("bot_id"), body.get("secret")) == (self.bot_id, self.secret) \
                        else rules.BAD_SECRET
                    self.calls.append(Call(time.monotonic(), cmd, rid, body, code))
                    await ws.send_json({"headers": {"req_id": rid}, "errcode": code, "errmsg": "ok" if not code
                                        else "invalid bot_id or secret"})
                    if code:
                        break
                    await self._displace(ws)
                    subscribed = True
                    continue
                if cmd in self.unanswered:
                    self.calls.append(Call(time.monotonic(), cmd, rid, body, -1))
                    continue
                code, extra = self._judge_frame(cmd, rid, body)
                self.calls.append(Call(time.monotonic(), cmd, rid, body, code))
                ack: dict[str, Any] = {"headers": {"req_id": rid}, "errcode": code, "errmsg": "ok" if not code
                                       else f"error {code}"}
                if extra:
                    ack["body"] = extra
                await ws.send_json(ack)
        finally:
            if self._ws is ws:
                self._ws = None
                self.subscribed.clear()
            await ws.close()
        return ws

    async def _displace(self, ws: web.WebSocketResponse) -> None:
        old, self._ws = self._ws, ws
        if old is not None and not old.closed:
            event = {"msgid": f"dc-{next(self._ids)}", "aibotid": self.bot_id, "msgtype": "event",
                     "event": {"eventtype": "disconnected_event"}}
            await old.send_json({"cmd": "aibot_event_callback", "headers": {"req_id": "dc"}, "body": event})
            await old.close()
        self.subscribed.set()

    def _judge_frame(self, cmd: str, rid: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        if cmd == "ping":
            return rules.OK, None
        for i, (names, code) in enumerate(self._failures):
            if cmd in names:
                del self._failures[i]
                return code, None
        return self.reply_frame(cmd, rid, body)

    def budget(self, chat: str) -> bool:
        """A new message into `chat`: False when over WeCom's per-conversation budgets (refused with 45009)."""
        for judge in self._judges:
            if judge.over(chat):
                self.breach(f"per conversation in {judge.window:.0f} s", chat)
        return not any(window.over(chat) for window in self._windows)

    async def _serve_media(self, request: web.Request) -> web.Response:
        data = self._media.get(request.match_info["id"])
        return web.Response(body=data) if data is not None else web.Response(status=404)


def _chat_of(body: dict[str, Any]) -> tuple[str, bool]:
    group = body.get("chattype") == "group"
    return (str(body.get("chatid")) if group else str(body.get("from", {}).get("userid", ""))), group
