"""Run traces on PostgreSQL: a batch of finished runs and each chat's cap in one statement (one round trip)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

from bot.store.postgres.database import Database
from bot.store.traces import Trace, parse_detail

_COLUMNS = ("id, chat, conversation_id, started_at, model, outcome, duration_ms, ttft_ms, prompt_tokens, "
            "completion_tokens, error_id, detail")
# Each chat numbers its traces (n) after its highest number so far, so its cap is a range on (chat, n). The
# statement sees the table as it was before its own insert: the cap counts the batch's rows through `k`.
_ADD = f"""
WITH batch AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[],
                         $7::int[], $8::int[], $9::int[], $10::int[], $11::text[], $12::text[])
        WITH ORDINALITY AS b({_COLUMNS}, ord)
), per_chat AS (
    SELECT chat, count(*) AS k, COALESCE((SELECT max(n) FROM traces AS t WHERE t.chat = batch.chat), 0) AS base
    FROM batch GROUP BY chat
), added AS (
    INSERT INTO traces ({_COLUMNS}, n)
    SELECT {", ".join("b." + c for c in _COLUMNS.split(", "))},
           c.base + row_number() OVER (PARTITION BY b.chat ORDER BY b.ord)
    FROM batch AS b JOIN per_chat AS c ON c.chat = b.chat
    ON CONFLICT (id) DO NOTHING
)
DELETE FROM traces AS t USING per_chat AS c WHERE t.chat = c.chat AND t.n <= c.base + c.k - $13
"""


def _trace(row: asyncpg.Record) -> Trace:
    tid, chat, conv, started, model, outcome, duration, ttft, prompt, completion, error_id, detail = row
    sections, steps = parse_detail(detail)
    return Trace(tid, chat, conv, started, model, outcome, duration, ttft, prompt, completion, sections, steps,
                 error_id)


class PostgresTraces:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, traces: Sequence[Trace], keep_per_chat: int) -> None:
        columns = list(zip(*((t.id, t.chat, t.conversation_id, t.started_at, t.model, t.outcome, t.duration_ms,
                               t.ttft_ms, t.prompt_tokens, t.completion_tokens, t.error_id, t.detail_json())
                              for t in traces), strict=True))
        if columns:
            await self._db.pool.execute(_ADD, *columns, keep_per_chat)

    async def get(self, chat: str, trace_id: str) -> Trace | None:
        row = await self._db.pool.fetchrow(f"SELECT {_COLUMNS} FROM traces WHERE id = $1 AND chat = $2",
                                           trace_id, chat)
        return _trace(row) if row else None

    async def prune(self, before: datetime) -> int:
        status: str = await self._db.pool.execute("DELETE FROM traces WHERE started_at < $1", before)
        return int(status.split()[-1])
