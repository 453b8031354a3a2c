"""Background tasks on PostgreSQL: the row and its run's inbox entry in one transaction (the chat's inbox
sequence row is locked until commit, like any accepted message); a task's later writes are fenced by its chat's
partition, so a replica that lost the chat cannot end a task its new owner runs."""

from __future__ import annotations

import time

from bot.store.inbox import DEDUPE_TTL
from bot.store.postgres.claims import Fence, Guard
from bot.store.postgres.database import Database
from bot.store.postgres.inbox import ACCEPT_SQL
from bot.store.tasks import COLUMNS, NewTask, Task, TaskState, TooManyTasks, insert_values, task_event, task_row
from bot.tree.model import utc_now

_INSERT = ("INSERT INTO tasks (chat, conversation_id, parent_id, prompt, role, model, tools, where_ref, user_id, "
           "user_name, lang, state, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'running', $12) "
           f"RETURNING {COLUMNS}")
_FENCE = "(SELECT bothub_fence($1, $2) AS ok) AS fence"


class PostgresTasks:
    def __init__(self, db: Database, guard: Guard) -> None:
        self._db = db
        self._guard = guard

    async def start(self, task: NewTask, limit: int) -> tuple[Task, int]:
        now = time.time()
        async with self._db.pool.acquire() as db, db.transaction():
            # the chat's running tasks are counted under its row lock of the inbox sequence: two starts at once in
            # one chat take turns
            await db.execute("INSERT INTO inbox_order (session, last) VALUES ($1, 0) ON CONFLICT (session) "
                             "DO UPDATE SET last = inbox_order.last", task.chat)
            running = await db.fetchval("SELECT count(*) FROM tasks WHERE chat = $1 AND state = 'running'", task.chat)
            if running >= limit:
                raise TooManyTasks
            row = task_row(await db.fetchrow(_INSERT, *insert_values(task), utc_now()))
            accepted = await db.fetchrow(ACCEPT_SQL, f"task:{task.chat}:{row.id}", now + DEDUPE_TTL, now, task.chat,
                                         task_event(row.id), None, None)
            return row, int(accepted[0])

    async def get(self, chat: str, task_id: int) -> Task | None:
        row = await self._db.pool.fetchrow(f"SELECT {COLUMNS} FROM tasks WHERE chat = $1 AND id = $2", chat, task_id)
        return task_row(row) if row is not None else None

    async def recent(self, chat: str, limit: int = 20) -> list[Task]:
        sql = f"SELECT {COLUMNS} FROM tasks WHERE chat = $1 ORDER BY id DESC LIMIT $2"
        return [task_row(r) for r in await self._db.pool.fetch(sql, chat, limit)]

    async def noted(self, chat: str, task_id: int, *, branch_id: str | None = None,
                    progress_id: str | None = None) -> None:
        sql = (f"UPDATE tasks SET branch_id = COALESCE($5, branch_id), progress_id = COALESCE($6, progress_id) "
               f"FROM {_FENCE} WHERE fence.ok AND chat = $3 AND id = $4")

        async def note(fence: Fence) -> None:
            await self._db.pool.execute(sql, *_of(fence), chat, task_id, branch_id, progress_id)

        await self._guard(chat, note)

    async def end(self, chat: str, task_id: int, state: TaskState, result: str = "") -> bool:
        sql = (f"UPDATE tasks SET state = $5, result = $6, finished_at = $7 FROM {_FENCE} "
               "WHERE fence.ok AND chat = $3 AND id = $4 AND state = 'running'")

        async def end(fence: Fence) -> bool:
            status: str = await self._db.pool.execute(sql, *_of(fence), chat, task_id, state, result, utc_now())
            return status.split()[-1] != "0"  # "UPDATE <n>"

        return await self._guard(chat, end)


def _of(fence: Fence) -> tuple[int | None, int | None]:
    return fence if fence is not None else (None, None)
