"""Jobs on SQLite: a claim is one IMMEDIATE transaction (which also serializes processes sharing the file) that
queues each run in the inbox."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bot.messages import ChatRef
from bot.store.jobs import Job, NewJob, Plan, Queued, run_key
from bot.store.sqlite.codec import iso, now_iso, parse_time
from bot.store.sqlite.database import Database
from bot.store.sqlite.inbox import queue

_COLUMNS = ("id, chat, conversation_id, created_by, kind, spec, timezone, next_due, text, runs_agent, enabled, "
            "last_run, last_result, claimed_at, platform, chat_id, thread_id, is_group, created_by_name, heartbeat, "
            "identity")
_INSERT = ("INSERT INTO jobs (chat, conversation_id, created_by, kind, spec, timezone, next_due, text, runs_agent, "
           "created_at, platform, chat_id, thread_id, is_group, created_by_name, heartbeat, identity) "
           f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {_COLUMNS}")
_DUE = (f"SELECT {_COLUMNS} FROM jobs WHERE enabled = 1 AND claimed_at IS NULL AND next_due <= ? "
        "ORDER BY next_due, id LIMIT ?")
_RELEASE = ("UPDATE jobs SET claimed_at = NULL WHERE claimed_at IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM inbox WHERE inbox.job = jobs.id)")


def _job(row: Sequence[Any]) -> Job:
    (jid, chat, conv, by, kind, spec, tz, due, text, agent, enabled, last_run, result, claimed, platform, chat_id,
     thread_id, is_group, by_name, heartbeat, identity) = row
    where = ChatRef(platform, chat_id, thread_id, bool(is_group), identity=identity) if platform else None
    return Job(jid, chat, conv, by, kind, spec, tz, parse_time(due), text, bool(agent), bool(enabled),
               parse_time(last_run), result, parse_time(claimed), where, by_name, bool(heartbeat))


def _optional_iso(dt: datetime | None) -> str | None:
    return iso(dt) if dt is not None else None


class SqliteJobs:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, job: NewJob) -> Job:
        w = job.where or ChatRef("", "")
        params = (job.chat, job.conversation_id, job.created_by, job.kind, job.spec, job.timezone, iso(job.next_due),
                  job.text, int(job.runs_agent), now_iso(), w.platform, w.chat_id, w.thread_id, int(w.is_group),
                  job.created_by_name, int(job.heartbeat), w.identity)
        return _job(await self._db.write(lambda db: db.execute(_INSERT, params).fetchone()))

    async def for_chat(self, chat: str) -> list[Job]:
        sql = f"SELECT {_COLUMNS} FROM jobs WHERE chat = ? ORDER BY next_due IS NULL, next_due, id"
        return [_job(r) for r in await self._db.read(lambda db: db.execute(sql, (chat,)).fetchall())]

    async def queue_due(self, now: datetime, limit: int, plan: Plan) -> list[Queued]:
        def op(db: sqlite3.Connection) -> list[Queued]:
            queued = []
            for job in [_job(r) for r in db.execute(_DUE, (iso(now), max(limit, 0))).fetchall()]:
                due, entry = plan(job), None
                if due.event is not None:
                    accepted = queue(db, run_key(job), job.chat, due.event, now.timestamp(), job=job.id)
                    entry = accepted.id if accepted is not None else None
                db.execute("UPDATE jobs SET claimed_at = ?, next_due = ? WHERE id = ?",
                           (iso(now) if entry is not None else None, _optional_iso(due.next_due), job.id))
                queued.append(Queued(job, entry))
            return queued

        return await self._db.write(op)

    async def finish(self, job_id: int, ran_at: datetime, result: str) -> None:
        sql = "UPDATE jobs SET last_run = ?, last_result = ?, claimed_at = NULL WHERE id = ?"
        await self._db.write(lambda db: db.execute(sql, (iso(ran_at), result, job_id)))

    async def delete(self, chat: str, job_id: int) -> bool:
        sql = "DELETE FROM jobs WHERE chat = ? AND id = ?"
        return bool(await self._db.write(lambda db: db.execute(sql, (chat, job_id)).rowcount))

    async def set_enabled(self, chat: str, job_id: int, enabled: bool, next_due: datetime | None = None) -> Job | None:
        sql = ("UPDATE jobs SET enabled = ?, next_due = COALESCE(?, next_due) WHERE chat = ? AND id = ? "
               f"RETURNING {_COLUMNS}")
        params = (int(enabled), _optional_iso(next_due), chat, job_id)
        row = await self._db.write(lambda db: db.execute(sql, params).fetchone())
        return _job(row) if row else None

    async def disable_chat(self, chat: str) -> int:
        sql = "UPDATE jobs SET enabled = 0 WHERE chat = ? AND enabled = 1"
        return int(await self._db.write(lambda db: db.execute(sql, (chat,)).rowcount))

    async def next_due(self) -> datetime | None:
        sql = "SELECT MIN(next_due) FROM jobs WHERE enabled = 1 AND claimed_at IS NULL"
        return parse_time(await self._db.read(lambda db: db.execute(sql).fetchone()[0]))

    async def release_claims(self) -> int:
        return int(await self._db.write(lambda db: db.execute(_RELEASE).rowcount))
