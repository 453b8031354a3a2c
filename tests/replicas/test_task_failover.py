"""A background task outlives its replica: two apps on one PostgreSQL in one process; the one that owns the chat
stops mid-task, and the other takes the chat over with the task's inbox entry and finishes it."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.postgres import PostgresServer
from tests.replicas.cluster import chat_owned_by, settled
from tests.tasking import hold_tasks, task_requests

QUICK = {"shutdown_grace": 0.2}


async def test_a_task_is_taken_over_by_another_replica(tmp_path: Path, fake: FakeOpenAI,
                                                       postgres: PostgresServer) -> None:
    env = {"BOTHUB_DATABASE_URL": await postgres.new_database()}
    ra, rb, release = RecordingAdapter(), RecordingAdapter(), hold_tasks(fake)
    for name in "ab":
        (tmp_path / name).mkdir()
    async with running_app(tmp_path / "b", fake.base_url, config=QUICK, adapters=(rb,),
                           env={**env, "BOTHUB_REPLICA_ID": "b"}) as b:
        async with running_app(tmp_path / "a", fake.base_url, config=QUICK, adapters=(ra,),
                               env={**env, "BOTHUB_REPLICA_ID": "a"}) as a:
            await settled(a.store.claims, b.store.claims)
            chat = chat_owned_by(a.store.claims)
            await ra.say("/task weigh the moon", chat)
            await wait_for(lambda: len(task_requests(fake)) == 1)  # running on a, its model request held
            assert any(lane.name.endswith("task t1") for lane in a.lanes.active())  # on the dashboard's overview
            await ra.say("and meanwhile?", chat)  # the chat answers beside its task
            await wait_for(lambda: ra.texts(chat)[-1] == "and meanwhile?")
        # a is gone mid-task; its entry waits in the inbox for the chat's next owner
        release.set()
        await wait_for(lambda: any(text.startswith("**Task t1**") for text in rb.texts(chat)), within=20)
        key = f"recording:{chat}"
        assert b.store.claims.holds(key)
        task = await b.store.tasks.get(key, 1)
        assert task is not None and task.state == "done" and "[t1] weigh the moon" in task.result
        assert len(task_requests(fake)) == 2  # asked again by b: a's run was cut before its answer
        await wait_for(lambda: not b.lanes.active())
        assert await b.store.inbox.waiting(key) == []
        assert not any(text.startswith("**Task t1**") for text in ra.texts(chat))
