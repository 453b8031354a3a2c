"""Jobs on PostgreSQL: due rows are claimed with FOR UPDATE SKIP LOCKED, so replicas never take the same one."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from bot.store.jobs import Job, NewJob, Reschedule
from bot.store.postgres.database import Database

_COLUMNS = ("id, chat, conversation_id, created_by, kind, spec, timezone, next_due, text, runs_agent, enabled, "
            "last_run, last_result, claimed_at")
_INSERT = ("INSERT INTO jobs (chat, conversation_id, created_by, kind, spec, timezone, next_due, text, runs_agent) "
           f"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {_COLUMNS}")
_DUE = (f"SELECT {_COLUMNS} FROM jobs WHERE enabled AND claimed_at IS NULL AND next_due <= $1 "
        "ORDER BY next_due, id LIMIT $2 FOR UPDATE SKIP LOCKED")


def _job(row: asyncpg.Record) -> Job:
    return Job(*row)


class PostgresJobs:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, job: NewJob) -> Job:
        return _job(await self._db.pool.fetchrow(_INSERT, job.chat, job.conversation_id, job.created_by, job.kind,
                                              job.spec, job.timezone, job.next_due, job.text, job.runs_agent))

    async def for_chat(self, chat: str) -> list[Job]:
        sql = f"SELECT {_COLUMNS} FROM jobs WHERE chat = $1 ORDER BY next_due NULLS LAST, id"
        return [_job(r) for r in await self._db.pool.fetch(sql, chat)]

    async def claim_due(self, now: datetime, limit: int, reschedule: Reschedule) -> list[Job]:
        async with self._db.pool.acquire() as db, db.transaction():
            due = [_job(r) for r in await db.fetch(_DUE, now, max(limit, 0))]
            await db.executemany("UPDATE jobs SET claimed_at = $1, next_due = $2 WHERE id = $3",
                                 [(now, reschedule(job), job.id) for job in due])
            return due

    async def finish(self, job_id: int, ran_at: datetime, result: str) -> None:
        await self._db.pool.execute("UPDATE jobs SET last_run = $1, last_result = $2, claimed_at = NULL WHERE id = $3",
                                 ran_at, result, job_id)
