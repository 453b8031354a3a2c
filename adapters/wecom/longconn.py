"""The AI bot's WebSocket long connection: subscribe with bot id + secret, a ping every HEARTBEAT seconds,
callbacks in, replies out, each request answered by an ack frame carrying its req_id.

A reply reuses the req_id of the callback it answers, so requests on one req_id go one at a time (the ack
names only the req_id). A connection that misses two heartbeat acks is dropped and reopened with backoff;
`disconnected_event` (another process subscribed the same bot, or `bothub doctor` checked it) is answered by
reconnecting only after DISPLACED_PAUSE, so two processes never fight over the bot in a tight loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from bot.httpkit.fence import still_owner
from bot.httpkit.recent import Recent

log = logging.getLogger(__name__)

CALLBACKS = frozenset({"aibot_msg_callback", "aibot_event_callback"})
BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
DISPLACED_PAUSE = 60.0
STOP_GRACE = 2.0  # seconds callbacks being taken in get to reach the hub at stop (WeCom never sends them again)
Take = Callable[[dict[str, Any]], Awaitable[None]]


class Refused(Exception):
    """WeCom refused the bot id or secret: no retry will help."""


class AckError(Exception):
    def __init__(self, errcode: int, errmsg: str) -> None:
        super().__init__(f"{errcode}: {errmsg}")
        self.errcode, self.errmsg = errcode, errmsg


def req_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


class LongConnection:
    heartbeat = 30.0  # seconds between pings
    ack_timeout = 5.0  # WeCom's own answer time; a reply not acked by then is lost
    pause: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)  # the reconnect backoff; tests drive it

    def __init__(self, session: aiohttp.ClientSession, url: str, bot_id: str, secret: str, take: Take) -> None:
        self._session, self._url, self._bot_id, self._secret, self._take = session, url, bot_id, secret, take
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._locks: Recent[asyncio.Lock] = Recent(5000)
        self._runner: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._deliveries: set[asyncio.Task[None]] = set()
        self.superseded = False

    async def start(self) -> None:
        """The first connection opens here, so bad credentials fail the start; later drops reconnect."""
        reader = await self._open()
        self._runner = asyncio.create_task(self._run(reader), name="wecom-longconn")

    async def stop(self) -> None:
        """Callbacks being taken in finish first (the socket stays open for their requests' acks); only what
        hangs past STOP_GRACE is cancelled, then the reader and the socket."""
        if self._runner is not None:
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)
        if self._deliveries:
            _, hanging = await asyncio.wait(set(self._deliveries), timeout=STOP_GRACE)
            for task in hanging:
                task.cancel()
            await asyncio.gather(*hanging, return_exceptions=True)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._runner = None
        if self._ws is not None:
            await self._ws.close()
            self._ws = None

    def is_connected(self) -> bool:
        return self._ws is not None and not self._ws.closed

    async def request(self, cmd: str, body: dict[str, Any] | None = None, rid: str = "") -> dict[str, Any]:
        """Send one frame and wait for its ack; raises AckError for a non-zero errcode."""
        rid = rid or req_id(cmd)
        lock = self._locks.get(rid) or asyncio.Lock()
        self._locks.put(rid, lock)
        async with lock:
            ws = self._ws
            if ws is None or ws.closed:
                raise ConnectionError("wecom: the long connection is down")
            future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self._pending[rid] = future
            frame: dict[str, Any] = {"cmd": cmd, "headers": {"req_id": rid}}
            if body is not None:
                frame["body"] = body
            try:
                await still_owner()  # the fence's last check, right before the frame leaves
                await ws.send_str(json.dumps(frame, ensure_ascii=False))
                ack = await asyncio.wait_for(future, self.ack_timeout)
            finally:
                self._pending.pop(rid, None)
        code = ack.get("errcode", 0)
        if code:
            raise AckError(code if isinstance(code, int) else -1, str(ack.get("errmsg", "")))
        return ack

    async def _open(self) -> asyncio.Task[None]:
        ws = await self._session.ws_connect(self._url, heartbeat=None, max_msg_size=4 * 2**20,
                                            timeout=aiohttp.ClientWSTimeout(ws_close=5.0))
        self._ws = ws
        reader = asyncio.create_task(self._read(ws))
        try:
            await self.request("aibot_subscribe", {"bot_id": self._bot_id, "secret": self._secret})
        except AckError as e:
            reader.cancel()
            await ws.close()
            raise Refused(str(e)) from e
        except BaseException:
            reader.cancel()
            await ws.close()
            raise
        self._track(reader)
        return reader

    def _track(self, task: asyncio.Task[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, reader: asyncio.Task[None]) -> None:
        failures = 0
        while True:
            beat = asyncio.create_task(self._beat())
            try:
                with contextlib.suppress(Exception):
                    await asyncio.shield(reader)
            finally:
                beat.cancel()
            log.warning("wecom: long connection lost")
            if self.superseded:
                log.error("wecom: another connection displaced this bot's; reconnecting in %.0f s", DISPLACED_PAUSE)
                await self.pause(DISPLACED_PAUSE)
                self.superseded = False
            while True:
                await self.pause(BACKOFF[min(failures, len(BACKOFF) - 1)])
                try:
                    reader = await self._open()
                    failures = 0
                    break
                except Refused:
                    raise
                except (aiohttp.ClientError, OSError, TimeoutError, ConnectionError) as e:
                    failures += 1
                    log.warning("wecom: reconnecting failed (attempt %d): %s", failures, e)

    async def _beat(self) -> None:
        """Pings while the socket is open; two acks missing in a row close it (the reader then ends)."""
        missed = 0
        while missed < 2:
            await asyncio.sleep(self.heartbeat)
            try:
                await self.request("ping")
                missed = 0
            except (TimeoutError, AckError, ConnectionError, aiohttp.ClientError):
                missed += 1
        if self._ws is not None:
            await self._ws.close()

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for msg in ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            try:
                frame = json.loads(msg.data)
            except ValueError:
                log.warning("wecom: unreadable frame skipped")
                continue
            if not isinstance(frame, dict):
                continue
            rid = str((frame.get("headers") or {}).get("req_id", ""))
            if frame.get("cmd") in CALLBACKS:
                body = frame.get("body")
                event = body.get("event") if isinstance(body, dict) else None
                if isinstance(event, dict) and event.get("eventtype") == "disconnected_event":
                    self.superseded = True
                delivery = asyncio.create_task(self._deliver(frame))
                self._deliveries.add(delivery)
                delivery.add_done_callback(self._deliveries.discard)
            elif (future := self._pending.get(rid)) is not None and not future.done():
                future.set_result(frame)
        for future in self._pending.values():  # their acks will never come on this socket
            if not future.done():
                future.set_exception(ConnectionError("wecom: the long connection closed"))

    async def _deliver(self, frame: dict[str, Any]) -> None:
        try:
            await self._take(frame)
        except Exception:  # no ACK to withhold here: the dedupe mark is taken back, so a redelivery is taken
            log.exception("wecom: a %s frame could not be taken in", frame.get("cmd"))

