"""One SQLite connection owned by one thread: each store operation is a single hop to that thread.

aiosqlite hops to its thread once per statement and per fetch; a message's writes took ~26 hops, each a
cross-thread round trip on the hot path. Running a whole operation (a transaction) as one function on
the database thread costs one hop, needs no asyncio lock (the thread serializes), and keeps the loop free
of blocking I/O all the same.

WAL checkpoints run on a second connection in a thread of their own, every few seconds: left to SQLite,
every ~1000 pages one unlucky commit on the hot path copies the whole log back into the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

log = logging.getLogger("bothub.database")
T = TypeVar("T")
Setup = Callable[[sqlite3.Connection], object]
CHECKPOINT_EVERY = 5.0  # seconds


class Database:
    def __init__(self, path: str) -> None:
        self._path = path
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._checkpoints: asyncio.Task[None] | None = None

    async def open(self, setup: Setup) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bothub-db")
        try:
            await self._call(self._connect, setup)
        except BaseException:
            self._executor.shutdown(wait=False)
            self._executor = None
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
        executor, self._executor = self._executor, None
        if executor is None:
            return
        await asyncio.get_running_loop().run_in_executor(executor, self._disconnect)
        executor.shutdown(wait=True)

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
        if self._executor is None:
            raise RuntimeError("store is not open")
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)


def _checkpoint(conn: sqlite3.Connection) -> None:
    """Copy committed pages into the database without waiting for (or blocking) readers and writers."""
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
