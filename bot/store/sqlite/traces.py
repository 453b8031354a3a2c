"""Run traces on SQLite: one write per batch of finished runs, each chat's cap applied in the same transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bot.store.sqlite.codec import iso
from bot.store.sqlite.database import Database
from bot.store.traces import Trace, parse_detail

_COLUMNS = ("id, chat, conversation_id, started_at, model, outcome, duration_ms, ttft_ms, prompt_tokens, "
            "completion_tokens, error_id, detail")
# Each chat numbers its traces (n), so its cap is two seeks on (chat, n) whatever the cap: no walk over kept rows.
_INSERT = (f"INSERT OR IGNORE INTO traces ({_COLUMNS}, n) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
           "(SELECT COALESCE(MAX(n), 0) + 1 FROM traces WHERE chat = ?))")
_CAP = "DELETE FROM traces WHERE chat = ? AND n <= (SELECT MAX(n) FROM traces WHERE chat = ?) - ?"


def _row(trace: Trace) -> tuple[Any, ...]:
    return (trace.id, trace.chat, trace.conversation_id, iso(trace.started_at), trace.model, trace.outcome,
            trace.duration_ms, trace.ttft_ms, trace.prompt_tokens, trace.completion_tokens, trace.error_id,
            trace.detail_json(), trace.chat)


def _trace(row: Sequence[Any]) -> Trace:
    tid, chat, conv, started, model, outcome, duration, ttft, prompt, completion, error_id, detail = row
    sections, steps = parse_detail(detail)
    return Trace(tid, chat, conv, datetime.fromisoformat(started), model, outcome, duration, ttft, prompt,
                 completion, sections, steps, error_id)


class SqliteTraces:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, traces: Sequence[Trace], keep_per_chat: int) -> None:
        rows = [_row(t) for t in traces]
        chats = sorted({t.chat for t in traces})

        def op(db: sqlite3.Connection) -> None:
            db.executemany(_INSERT, rows)
            for chat in chats:
                db.execute(_CAP, (chat, chat, keep_per_chat))

        await self._db.write(op)

    async def get(self, chat: str, trace_id: str) -> Trace | None:
        sql = f"SELECT {_COLUMNS} FROM traces WHERE id = ? AND chat = ?"
        row = await self._db.read(lambda db: db.execute(sql, (trace_id, chat)).fetchone())
        return _trace(row) if row else None

    async def prune(self, before: datetime) -> int:
        sql = "DELETE FROM traces WHERE started_at < ?"
        return int(await self._db.write(lambda db: db.execute(sql, (iso(before),)).rowcount))
