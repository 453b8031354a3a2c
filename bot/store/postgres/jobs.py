"""Jobs on PostgreSQL: due rows are claimed with FOR UPDATE SKIP LOCKED, so replicas never take the same one,
and each run is queued in the inbox in the same transaction."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from bot.messages import ChatRef
from bot.store.inbox import DEDUPE_TTL
from bot.store.jobs import Job, NewJob, Plan, Queued, run_key
from bot.store.postgres.database import Database
from bot.store.postgres.inbox import ACCEPT_SQL

_COLUMNS = ("id, chat, conversation_id, created_by, kind, spec, timezone, next_due, text, runs_agent, enabled, "
            "last_run, last_result, claimed_at, platform, chat_id, thread_id, is_group, created_by_name, heartbeat, "
            "identity")
_INSERT = ("INSERT INTO jobs (chat, conversation_id, created_by, kind, spec, timezone, next_due, text, runs_agent, "
           "platform, chat_id, thread_id, is_group, created_by_name, heartbeat, identity) "
           f"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING {_COLUMNS}")
_DUE = (f"SELECT {_COLUMNS} FROM jobs WHERE enabled AND claimed_at IS NULL AND next_due <= $1 "
        "ORDER BY next_due, id LIMIT $2 FOR UPDATE SKIP LOCKED")
_RELEASE = ("UPDATE jobs SET claimed_at = NULL WHERE claimed_at IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM inbox WHERE inbox.job = jobs.id)")


def _job(row: asyncpg.Record) -> Job:
    (jid, chat, conv, by, kind, spec, tz, due, text, agent, enabled, last_run, result, claimed, platform, chat_id,
     thread_id, is_group, by_name, heartbeat, identity) = row
    where = ChatRef(platform, chat_id, thread_id, is_group, identity=identity) if platform else None
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
                                              job.heartbeat, w.identity))

    async def for_chat(self, chat: str) -> list[Job]:
        sql = f"SELECT {_COLUMNS} FROM jobs WHERE chat = $1 ORDER BY next_due NULLS LAST, id"
        return [_job(r) for r in await self._db.pool.fetch(sql, chat)]

    async def queue_due(self, now: datetime, limit: int, plan: Plan) -> list[Queued]:
        queued, at = [], now.timestamp()
        async with self._db.pool.acquire() as db, db.transaction():
            due_jobs = [_job(r) for r in await db.fetch(_DUE, now, max(limit, 0))]
            # queued chat by chat (a chat's jobs keep their order): each chat's sequence row is locked until commit,
            # so two replicas queueing at once take those locks in one order and never deadlock
            for job in sorted(due_jobs, key=lambda j: j.chat):
                due, entry = plan(job), None
                if due.event is not None:
                    entry = await db.fetchval(ACCEPT_SQL, run_key(job), at + DEDUPE_TTL, at, job.chat, due.event,
                                              job.id, None)
                await db.execute("UPDATE jobs SET claimed_at = $1, next_due = $2 WHERE id = $3",
                                 now if entry is not None else None, due.next_due, job.id)
                queued.append(Queued(job, entry))
        return sorted(queued, key=lambda q: due_jobs.index(q.job))  # oldest due first

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

    async def release_claims(self) -> int:
        return int((await self._db.pool.execute(_RELEASE)).split()[-1])
