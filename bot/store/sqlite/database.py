"""One SQLite connection owned by one thread: each store operation is a single hop to that thread.

aiosqlite hops to its thread once per statement and per fetch; a message's writes took ~26 hops, each a
cross-thread round trip on the hot path. Running a whole operation (a transaction) as one function on
the database thread costs one hop, needs no asyncio lock (the thread serializes), and keeps the loop free
of blocking I/O all the same.

The thread takes operations from a plain queue and hands results back through one list: a burst of
operations (a thousand chats at once) costs one loop wake-up per batch of finished operations, not a
thread-pool future, a lock, a condition and a self-pipe write for each (that was ~0.3 ms of the event
loop per hop under load).

WAL checkpoints run on a second connection in a thread of their own, every few seconds: left to SQLite,
every ~1000 pages one unlucky commit on the hot path copies the whole log back into the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger("bothub.database")
T = TypeVar("T")
Setup = Callable[[sqlite3.Connection], object]
CHECKPOINT_EVERY = 5.0  # seconds
_Op = tuple[Callable[..., Any], tuple[object, ...], "asyncio.Future[Any]"]
_Done = tuple["asyncio.Future[Any]", Any, BaseException | None]


class Database:
    def __init__(self, path: str) -> None:
        self._path = path
        self._ops: queue.SimpleQueue[_Op | None] = queue.SimpleQueue()
        self._done: deque[_Done] = deque()  # finished on the thread, not yet handed to their futures
        self._wake_pending = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self._checkpoints: asyncio.Task[None] | None = None

    async def open(self, setup: Setup) -> None:
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._serve, name="bothub-db", daemon=True)
        self._thread.start()
        try:
            await self._call(self._connect, setup)
        except BaseException:
            await self._stop_thread()
            raise
        if self._path != ":memory:":
            self._checkpoints = asyncio.create_task(self._checkpoint_forever(), name="sqlite-checkpoints")

    async def _checkpoint_forever(self) -> None:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bothub-db-checkpoint") as executor:
            conn = await asyncio.get_running_loop().run_in_executor(executor, self._checkpoint_connection)
            try:
                while True:
                    await asyncio.sleep(CHECKPOINT_EVERY)
                    try:
                        await asyncio.get_running_loop().run_in_executor(executor, _checkpoint, conn)
                    except sqlite3.Error:  # busy or I/O trouble: the next pass tries again
                        log.exception("WAL checkpoint failed")
            finally:
                await asyncio.get_running_loop().run_in_executor(executor, conn.close)

    def _checkpoint_connection(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 5000")
        return conn

    def _connect(self, setup: Setup) -> None:
        if self._path != ":memory:":
            Path(self._path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.close(os.open(self._path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600))
            os.chmod(self._path, 0o600)  # every chat's messages: the owner only (WAL files follow this mode)
        conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        try:
            setup(conn)
            conn.execute("PRAGMA wal_autocheckpoint = 0")  # see _checkpoint_forever
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    async def close(self) -> None:
        if self._checkpoints is not None:
            self._checkpoints.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._checkpoints
            self._checkpoints = None
        if self._thread is None:
            return
        try:
            await self._call(self._disconnect)
        finally:
            await self._stop_thread()

    async def _stop_thread(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._ops.put(None)
            await asyncio.to_thread(thread.join)

    def _disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            _checkpoint(conn)  # leave a small log behind; the next start reads less
            conn.close()

    async def read(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """Run `op` on the database thread."""
        return await self._call(self._with_conn, op)

    async def write(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """Run `op` inside one IMMEDIATE transaction: all of it is stored, or none."""
        return await self._call(self._transaction, op)

    def _with_conn(self, op: Callable[[sqlite3.Connection], T]) -> T:
        if self._conn is None:
            raise RuntimeError("store is not open")
        return op(self._conn)

    def _transaction(self, op: Callable[[sqlite3.Connection], T]) -> T:
        if self._conn is None:
            raise RuntimeError("store is not open")
        db = self._conn
        db.execute("BEGIN IMMEDIATE")
        try:
            result = op(db)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return result

    async def _call(self, fn: Callable[..., T], *args: object) -> T:
        if self._thread is None or self._loop is None:
            raise RuntimeError("store is not open")
        future: asyncio.Future[T] = self._loop.create_future()
        self._ops.put((fn, args, future))
        return await future  # cancelling the wait does not undo an operation the thread has taken

    def _serve(self) -> None:
        """The database thread: run operations in order; wake the loop once for whatever finished meanwhile."""
        assert self._loop is not None
        while (op := self._ops.get()) is not None:
            fn, args, future = op
            try:
                self._done.append((future, fn(*args), None))
            except BaseException as e:  # handed to the caller, as run_in_executor would
                self._done.append((future, None, e))
            if not self._wake_pending:  # set before the loop empties `_done`, so nothing is left behind
                self._wake_pending = True
                with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for the result
                    self._loop.call_soon_threadsafe(self._hand_over)

    def _hand_over(self) -> None:
        self._wake_pending = False
        while self._done:
            future, result, error = self._done.popleft()
            if future.cancelled():
                continue
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)


def _checkpoint(conn: sqlite3.Connection) -> None:
    """Copy committed pages into the database without waiting for (or blocking) readers and writers."""
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
