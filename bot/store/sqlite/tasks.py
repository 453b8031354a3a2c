"""Background tasks on SQLite: a task's row and its run's inbox entry are written in one transaction."""

from __future__ import annotations

import sqlite3
import time

from bot.store.sqlite.codec import now_iso
from bot.store.sqlite.database import Database
from bot.store.sqlite.inbox import queue
from bot.store.tasks import COLUMNS, NewTask, Task, TaskState, TooManyTasks, insert_values, task_event, task_row

_INSERT = ("INSERT INTO tasks (chat, conversation_id, parent_id, prompt, role, model, tools, where_ref, user_id, "
           f"user_name, lang, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?) "
           f"RETURNING {COLUMNS}")


class SqliteTasks:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def start(self, task: NewTask, limit: int) -> tuple[Task, int]:
        def op(db: sqlite3.Connection) -> tuple[Task, int]:
            running = db.execute("SELECT count(*) FROM tasks WHERE chat = ? AND state = 'running'",
                                 (task.chat,)).fetchone()[0]
            if running >= limit:
                raise TooManyTasks
            row = task_row(db.execute(_INSERT, (*insert_values(task), now_iso())).fetchone())
            accepted = queue(db, f"task:{task.chat}:{row.id}", task.chat, task_event(row.id), time.time())
            assert accepted is not None  # the key names a row just made
            return row, accepted.id

        return await self._db.write(op)

    async def get(self, chat: str, task_id: int) -> Task | None:
        sql = f"SELECT {COLUMNS} FROM tasks WHERE chat = ? AND id = ?"
        row = await self._db.read(lambda db: db.execute(sql, (chat, task_id)).fetchone())
        return task_row(row) if row is not None else None

    async def recent(self, chat: str, limit: int = 20) -> list[Task]:
        sql = f"SELECT {COLUMNS} FROM tasks WHERE chat = ? ORDER BY id DESC LIMIT ?"
        return [task_row(r) for r in await self._db.read(lambda db: db.execute(sql, (chat, limit)).fetchall())]

    async def noted(self, chat: str, task_id: int, *, branch_id: str | None = None,
                    progress_id: str | None = None) -> None:
        sql = ("UPDATE tasks SET branch_id = COALESCE(?, branch_id), progress_id = COALESCE(?, progress_id) "
               "WHERE chat = ? AND id = ?")
        await self._db.write(lambda db: db.execute(sql, (branch_id, progress_id, chat, task_id)))

    async def end(self, chat: str, task_id: int, state: TaskState, result: str = "") -> bool:
        sql = ("UPDATE tasks SET state = ?, result = ?, finished_at = ? "
               "WHERE chat = ? AND id = ? AND state = 'running'")
        return bool(await self._db.write(lambda db: db.execute(sql, (state, result, now_iso(), chat,
                                                                     task_id)).rowcount))
