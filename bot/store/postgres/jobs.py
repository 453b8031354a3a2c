"""Jobs on PostgreSQL: due rows are claimed with FOR UPDATE SKIP LOCKED, so replicas never take the same one."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from bot.messages import ChatRef
from bot.store.jobs import Job, NewJob, Reschedule
from bot.store.postgres.database import Database

_COLUMNS = ("id, chat, conversation_id, created_by, kind, spec, timezone, next_due, text, runs_agent, enabled, "
            "last_run, last_result, claimed_at, platform, chat_id, thread_id, is_group, created_by_name, heartbeat")
_INSERT = ("INSERT INTO jobs (chat, conversation_id, created_by, kind, spec, timezone, next_due, text, runs_agent, "
           "platform, chat_id, thread_id, is_group, created_by_name, heartbeat) "
           f"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING {_COLUMNS}")
_DUE = (f"SELECT {_COLUMNS} FROM jobs WHERE enabled AND claimed_at IS NULL AND next_due <= $1 "
        "ORDER BY next_due, id LIMIT $2 FOR UPDATE SKIP LOCKED")


def _job(row: asyncpg.Record) -> Job:
    (jid, chat, conv, by, kind, spec, tz, due, text, agent, enabled, last_run, result, claimed, platform, chat_id,
     thread_id, is_group, by_name, heartbeat) = row
    where = ChatRef(platform, chat_id, thread_id, is_group) if platform else None
    return Job(jid, chat, conv, by, kind, spec, tz, due, text, agent, enabled, last_run, result, claimed, where,
               by_name, heartbeat)


class PostgresJobs:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, job: NewJob) -> Job:
        w = job.where or ChatRef("", "")
        return _job(await self._db.pool.fetchrow(_INSERT, job.chat, job.conversation_id, job.created_by, job.kind,
                                              job.spec, job.timezone, job.next_due, job.text, job.runs_agent,
                                              w.platform, w.chat_id, w.thread_id, w.is_group, job.created_by_name,
                                              job.heartbeat))

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

    async def delete(self, chat: str, job_id: int) -> bool:
        status: str = await self._db.pool.execute("DELETE FROM jobs WHERE chat = $1 AND id = $2", chat, job_id)
        return status != "DELETE 0"

    async def set_enabled(self, chat: str, job_id: int, enabled: bool, next_due: datetime | None = None) -> Job | None:
        sql = ("UPDATE jobs SET enabled = $1, next_due = COALESCE($2, next_due) WHERE chat = $3 AND id = $4 "
               f"RETURNING {_COLUMNS}")
        row = await self._db.pool.fetchrow(sql, enabled, next_due, chat, job_id)
        return _job(row) if row else None

    async def disable_chat(self, chat: str) -> int:
        status = await self._db.pool.execute("UPDATE jobs SET enabled = false WHERE chat = $1 AND enabled", chat)
        return int(status.split()[-1])

    async def next_due(self) -> datetime | None:
        sql = "SELECT MIN(next_due) FROM jobs WHERE enabled AND claimed_at IS NULL"
        due: datetime | None = await self._db.pool.fetchval(sql)
        return due

    async def release_claims(self, claimed_before: datetime) -> int:
        sql = "UPDATE jobs SET claimed_at = NULL WHERE claimed_at < $1"
        return int((await self._db.pool.execute(sql, claimed_before)).split()[-1])
