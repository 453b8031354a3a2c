"""Background tasks at their edges, the whole app against the fake model: the delegate tool's refusals reach the
model in words (a model not allowed, a chat at its limit); a task whose conversation was deleted meanwhile shows
its result in the chat and stores it nowhere."""

from __future__ import annotations

import json
from pathlib import Path

from tests.core.test_tasks import CHAT, QUICK, shown
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.tasking import hold_tasks, is_task, task_requests


async def test_delegate_refuses_a_model_not_allowed_and_a_task_over_the_limit(tmp_path: Path,
                                                                               fake: FakeOpenAI) -> None:
    rec, release = RecordingAdapter(), hold_tasks(fake)
    ask = [json.dumps({"task": "tally the votes", "model": "gpt-9-ultra"}), json.dumps({"task": "tally the votes"}),
           json.dumps({"task": "count the ballots"})]
    fake.script(*(ToolCalls([(f"call_{n}", "delegate", args)]) for n, args in enumerate(ask)), Text("one runs"))
    async with running_app(tmp_path, fake.base_url, config={**QUICK, "max_tasks": 1}, adapters=(rec,)) as app:
        await rec.say("tally the votes in the background")
        await wait_for(lambda: "one runs" in rec.texts())
        last = [r["body"] for r in fake.requests if not is_task(r["body"])][-1]  # the task's may come in between
        results = [m["content"] for m in last["messages"] if m["role"] == "tool"]
        assert results[0].startswith("Error: the model 'gpt-9-ultra' may not be chosen; allowed: fake-model")
        assert results[1].startswith("Started background task t1.")
        assert results[2].startswith("Error: this chat already has 1 background tasks running, the most it may")
        await wait_for(lambda: len(task_requests(fake)) == 1)
        assert [t.label for t in await app.tasks.recent(CHAT.storage_key)] == ["t1"]
        release.set()
        await wait_for(lambda: bool(shown(rec, "**Task t1**")))


async def test_a_result_whose_conversation_was_deleted_is_shown_and_kept_nowhere(tmp_path: Path,
                                                                                  fake: FakeOpenAI) -> None:
    rec, release = RecordingAdapter(), hold_tasks(fake)
    async with running_app(tmp_path, fake.base_url, config=QUICK, adapters=(rec,)) as app:
        await rec.say("hello")
        await wait_for(lambda: rec.texts() == ["hello"])
        origin = app.lanes.session(CHAT).conversation_id
        await rec.say("/task research owls")
        await wait_for(lambda: len(task_requests(fake)) == 1)
        await rec.say("/new")
        await wait_for(lambda: app.lanes.session(CHAT).conversation_id != origin)
        said = len(rec.texts())
        await rec.say(f"/delete {origin}")
        await wait_for(lambda: len(rec.texts()) > said)
        assert origin is not None and await app.store.conversations.get(CHAT.storage_key, origin) is None
        release.set()
        await wait_for(lambda: bool(shown(rec, "**Task t1**")))
        result = shown(rec, "**Task t1**")[0]
        assert "[t1] research owls" in result and "/switch" not in result  # nowhere to switch to
        task = await app.store.tasks.get(CHAT.storage_key, 1)
        assert task is not None and task.state == "done"
        await wait_for(lambda: not app.lanes.active())
        assert await app.store.inbox.unfinished() == []
