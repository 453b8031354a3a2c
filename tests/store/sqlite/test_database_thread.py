"""The SQLite database thread: a burst of operations runs in order, each result (or failure) reaches its own
caller, and a caller that stops waiting costs the others nothing."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.store.sqlite.database import Database


def _setup(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS t (n INTEGER)")


async def test_a_burst_runs_in_order_and_every_caller_gets_its_own_result(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "db.sqlite3"))
    await db.open(_setup)
    ran: list[int] = []

    def op(n: int) -> Callable[[sqlite3.Connection], int]:
        def run(conn: sqlite3.Connection) -> int:
            ran.append(n)
            conn.execute("INSERT INTO t (n) VALUES (?)", (n,))
            return n * 10
        return run

    try:
        results = await asyncio.gather(*(db.write(op(n)) for n in range(500)))
        assert results == [n * 10 for n in range(500)]
        assert ran == list(range(500))
        assert await db.read(lambda conn: conn.execute("SELECT COUNT(*) FROM t").fetchone()[0]) == 500
    finally:
        await db.close()


async def test_a_failing_operation_fails_only_its_caller_and_is_rolled_back(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "db.sqlite3"))
    await db.open(_setup)

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t (n) VALUES (1)")
        raise ValueError("no")

    try:
        outcomes = await asyncio.gather(db.write(lambda conn: conn.execute("INSERT INTO t (n) VALUES (0)").rowcount),
                                        db.write(broken),
                                        db.read(lambda conn: conn.execute("SELECT n FROM t").fetchall()),
                                        return_exceptions=True)
        assert outcomes[0] == 1 and isinstance(outcomes[1], ValueError) and outcomes[2] == [(0,)]
    finally:
        await db.close()


async def test_a_caller_that_stops_waiting_leaves_the_others_their_results(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "db.sqlite3"))
    await db.open(_setup)
    errors: list[dict[str, object]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, context: errors.append(context))
    try:
        waits = [asyncio.ensure_future(db.write(lambda conn: conn.execute("INSERT INTO t (n) VALUES (7)").rowcount))
                 for _ in range(50)]
        await asyncio.sleep(0)  # every operation is queued
        waits[10].cancel()
        results = await asyncio.gather(*waits, return_exceptions=True)
        assert isinstance(results[10], asyncio.CancelledError)
        assert results[:10] + results[11:] == [1] * 49
        assert await db.read(lambda conn: conn.execute("SELECT COUNT(*) FROM t").fetchone()[0]) == 50  # it ran
        assert errors == []
    finally:
        await db.close()


async def test_a_closed_database_refuses_operations(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "db.sqlite3"))
    await db.open(_setup)
    await db.close()
    with pytest.raises(RuntimeError, match="not open"):
        await db.read(lambda conn: None)
