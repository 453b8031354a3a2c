"""Events between replicas over LISTEN/NOTIFY: a reply made on a chat's owner reaches the replica where the
HTTP request or the browser tab waits for it, and a finished inbox entry (a trigger NOTIFYs each delete as
`done:<session>`) wakes whoever waits for that chat's answer.

A notification is `<topic as JSON>\\n<sender>\\n<body>`; a body too big for NOTIFY's 8 000 bytes waits in
relay_events and the notification carries `#<row id>`. One dedicated connection LISTENs; notifications are
handled one at a time in the order the server delivers them (commit order), so a reply is heard before the
`done` of the entry it answers. Topics nobody listens to here cost a string split, no query.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import asyncpg

from bot.adapter import RelayEvent
from bot.store.postgres.database import Database

log = logging.getLogger("bothub.replicas")

CHANNEL = "bothub_relay"
INLINE = 7800  # bytes of a notification's body beyond which it goes through relay_events (the server's cap: 8000)
KEEP = 600  # seconds a stored body is kept for a listener that is slow to read it
CHECK_EVERY = 1.0  # seconds between checks of the listening connection (and, each minute, the clean-up)
_PUBLISH_SQL = f"""
WITH stored AS (INSERT INTO relay_events (body) VALUES ($2) RETURNING id)
SELECT pg_notify('{CHANNEL}', $1 || '#' || id) FROM stored
"""
Heard = Callable[[RelayEvent], None]


class PostgresRelay:
    def __init__(self, db: Database, replica: str) -> None:
        self._db = db
        self._replica = replica
        self._listeners: dict[str, set[Heard]] = defaultdict(set)
        self._heard: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._conn: asyncpg.Connection | None = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        await self._connect()
        self._tasks = [asyncio.create_task(self._dispatch(), name="relay-dispatch"),
                       asyncio.create_task(self._keep_alive(), name="relay-keepalive")]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def publish(self, topic: str, event: RelayEvent) -> None:
        head = f"{json.dumps(topic)}\n{self._replica}\n"
        body = json.dumps(event, ensure_ascii=False)
        if len(head.encode()) + len(body.encode()) <= INLINE:
            await self._db.pool.execute("SELECT pg_notify($1, $2)", CHANNEL, head + body)
        else:
            await self._db.pool.execute(_PUBLISH_SQL, head, body)

    def listen(self, topic: str, heard: Heard) -> Callable[[], None]:
        self._listeners[topic].add(heard)

        def stop() -> None:
            listeners = self._listeners.get(topic)
            if listeners is not None:
                listeners.discard(heard)
                if not listeners:
                    del self._listeners[topic]

        return stop

    async def _connect(self) -> None:
        conn = await asyncpg.connect(self._db.url)
        await conn.add_listener(CHANNEL, self._notified)
        self._conn = conn

    def _notified(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        topic_json, _, rest = payload.partition("\n")
        sender, _, body = rest.partition("\n")
        if sender == self._replica:
            return
        with contextlib.suppress(ValueError):
            topic = json.loads(topic_json)
            if topic in self._listeners:
                self._heard.put_nowait((topic, body))

    async def _dispatch(self) -> None:
        while True:
            topic, body = await self._heard.get()
            try:
                if body.startswith("#"):
                    body = await self._db.pool.fetchval("SELECT body FROM relay_events WHERE id = $1",
                                                        int(body[1:])) or "{}"
                event: RelayEvent = json.loads(body) if body else {}
                for heard in list(self._listeners.get(topic, ())):
                    heard(event)
            except Exception:
                log.exception("replica %s: a relayed event on %s could not be handled", self._replica, topic)

    async def _keep_alive(self) -> None:
        """Reconnect a lost listening connection (what was published meanwhile is missed: waiters also poll)
        and drop stored bodies nobody can still need."""
        cleaned = time.monotonic()
        while True:
            await asyncio.sleep(CHECK_EVERY)
            try:
                if self._conn is None or self._conn.is_closed():
                    await self._connect()
                if time.monotonic() - cleaned > 60:
                    cleaned = time.monotonic()
                    await self._db.pool.execute("DELETE FROM relay_events WHERE created_at < now() - "
                                                "make_interval(secs => $1)", KEEP)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
                log.warning("replica %s: relay connection: %s", self._replica, e)
