"""Background tasks (sub-agents) on the embedded store: the whole app against the fake model and an in-memory
platform. A task's model requests are held (`FakeOpenAI.hold_only`) so each test decides when it may answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from bot.chats.sessions import SessionKey
from bot.tree.model import Conversation
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.tasking import hold_tasks, task_requests

CHAT = SessionKey("recording", "c1")
QUICK = {"shutdown_grace": 0.2}


def shown(rec: RecordingAdapter, start: str) -> list[str]:
    return [text for text in rec.texts() if text.startswith(start)]


async def tree(app: Any, conv_id: str) -> Conversation:
    conv = await app.store.conversations.load(CHAT.storage_key, conv_id, "")
    assert conv is not None
    return conv


async def test_a_task_runs_beside_the_chat_and_posts_into_the_conversation_that_started_it(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    rec, release = RecordingAdapter(), hold_tasks(fake)
    async with running_app(tmp_path, fake.base_url, config=QUICK, adapters=(rec,)) as app:
        await rec.say("hello")
        await wait_for(lambda: rec.texts() == ["hello"])
        session = app.lanes.session(CHAT)
        origin, started_at = session.conversation_id, session.cursor
        await rec.say("/task research cats")
        await wait_for(lambda: len(task_requests(fake)) == 1)  # the sub-agent asked the model, which holds
        assert shown(rec, "⏳ Task t1 · research cats")
        await rec.say("still there?")  # the chat's lane is free: answered while the task works
        await wait_for(lambda: rec.texts()[-1] == "still there?")
        await rec.say("/tasks")
        await wait_for(lambda: "`t1` · running · research cats" in rec.texts()[-1])
        await rec.say("/new")  # the chat moves on to another conversation meanwhile
        await wait_for(lambda: app.lanes.session(CHAT).conversation_id != origin)
        release.set()
        await wait_for(lambda: bool(shown(rec, "**Task t1**")))
        result = shown(rec, "**Task t1**")[0]
        assert "[t1] research cats" in result and f"/switch {origin}" in result  # the echo's answer, and where
        await wait_for(lambda: bool(shown(rec, "✅ Task t1 · research cats · done")))  # its progress, in place
        assert not shown(rec, "⏳")
        assert origin is not None and started_at is not None
        conv = await tree(app, origin)
        branch = [conv.messages[i] for i in conv.children[started_at]]
        prompt = next(m for m in branch if m.content == "[t1] research cats")  # the side branch, where it began
        answer = conv.messages[conv.children[prompt.id][0]]
        assert answer.role == "assistant" and answer.trace_id  # with its run's trace
        await wait_for_trace(app, answer.trace_id)
        head = conv.messages[conv.current_message_id]  # the result continues the conversation's main line
        assert head.content.startswith("**Task t1**") and head.parent_id != prompt.id
        assert app.lanes.session(CHAT).conversation_id != origin  # and the chat stays where it went
        await rec.say(f"/switch {origin}")
        await rec.say("/tree")
        await wait_for(lambda: "[t1] research cats" in rec.texts()[-1])


async def test_two_tasks_run_at_once_up_to_the_limit_and_cancel_stops_one_mid_run(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    rec, release = RecordingAdapter(), hold_tasks(fake)
    async with running_app(tmp_path, fake.base_url, config={**QUICK, "max_tasks": 2}, adapters=(rec,)) as app:
        for prompt in ("first job", "second job", "third job"):
            await rec.say(f"/task {prompt}")
        await wait_for(lambda: len(task_requests(fake)) == 2)  # both ask the model at the same time
        await wait_for(lambda: any("already has 2 background tasks" in text for text in rec.texts()))
        await rec.say("/cancel t1")
        await wait_for(lambda: "Task `t1` cancelled." in rec.texts())
        await wait_for(lambda: bool(shown(rec, "🛑 Task t1 · first job · cancelled")))
        release.set()
        await wait_for(lambda: bool(shown(rec, "**Task t2**")))
        await rec.say("/tasks")
        await wait_for(lambda: rec.texts()[-1].startswith("Background tasks"))
        listing = rec.texts()[-1]
        assert "`t2` · done · second job" in listing and "`t1` · cancelled · first job" in listing
        assert not shown(rec, "**Task t1**")  # a cancelled task posts nothing
        await rec.say("/cancel t9")
        await wait_for(lambda: rec.texts()[-1] == "There is no task `t9` in this chat.")
        await rec.say("/lang zh")
        await app.hub.idle()  # /lang runs in the lane, /tasks at once
        await rec.say("/tasks")
        await wait_for(lambda: "`t2` · 已完成 · second job" in rec.texts()[-1])
        assert await app.store.inbox.unfinished() == []


async def test_the_model_delegates_with_a_tool_subset_and_its_run_does_not_wait(tmp_path: Path,
                                                                                fake: FakeOpenAI) -> None:
    rec, release = RecordingAdapter(), hold_tasks(fake)
    args = json.dumps({"task": "summarize the plan", "tools": ["recall"], "role": "nobody"})
    fake.script(ToolCalls([("call_1", "delegate", args)]),  # refused: then the model asks again without the role
                ToolCalls([("call_2", "delegate", json.dumps({"task": "summarize the plan", "tools": ["recall"]}))]),
                Text("Started it; I will post the summary."))
    async with running_app(tmp_path, fake.base_url, config=QUICK, adapters=(rec,)) as app:
        await rec.say("please summarize the plan in the background")
        await wait_for(lambda: "Started it; I will post the summary." in rec.texts())  # the parent's run ended
        tool_results = [m["content"] for m in fake.requests[1]["body"]["messages"] if m["role"] == "tool"]
        assert "there is no role 'nobody'" in tool_results[0]
        await wait_for(lambda: len(task_requests(fake)) == 1)
        sub = task_requests(fake)[0]
        assert [t["function"]["name"] for t in sub["tools"]] == ["recall"]  # only what the task named
        assert not any(m.get("tool_calls") for m in sub["messages"])  # hung under the question, not the call
        release.set()
        await wait_for(lambda: bool(shown(rec, "**Task t1**")))
        session = app.lanes.session(CHAT)
        assert session.path[-1].content.startswith("**Task t1**")  # in the conversation it was started in
        assert "/switch" not in session.path[-1].content


async def test_a_task_cut_by_a_restart_finishes_after_it(tmp_path: Path, fake: FakeOpenAI) -> None:
    first, release = RecordingAdapter(), hold_tasks(fake)
    async with running_app(tmp_path, fake.base_url, config=QUICK, adapters=(first,)):
        await first.say("/task count the stars")
        await wait_for(lambda: len(task_requests(fake)) == 1)  # mid-run when the app stops
    assert not shown(first, "**Task t1**")
    release.set()
    second = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, config=QUICK, adapters=(second,)) as app:
        await wait_for(lambda: bool(shown(second, "**Task t1**")))  # the inbox entry was resumed: it ran again
        task = await app.store.tasks.get(CHAT.storage_key, 1)
        assert task is not None and task.state == "done" and task.progress_id
        assert first.sent[0][1].text.startswith("⏳ Task t1")  # sent before the restart, edited after it
        await wait_for(lambda: any(ref.message_id == task.progress_id and reply.text.startswith("✅ Task t1")
                                   for ref, reply, _ in second.edits))
        assert not any(reply.text.startswith("⏳") for _, reply in second.sent)
        await wait_for(lambda: not app.lanes.active())
        assert await app.store.inbox.unfinished() == []


async def wait_for_trace(app: Any, trace_id: str) -> None:
    """Traces are stored after their run, in the background."""
    for _ in range(200):
        if await app.store.traces.get(CHAT.storage_key, trace_id) is not None:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"trace {trace_id} was not stored")
