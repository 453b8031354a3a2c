"""Run traces end to end: a run through the real app and the fake LLM stores what it did, once, at its end,
under a trace id that every log line of the run carries."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from bot.agent.events import RunFinished
from bot.agent.trace import RunTrace, TraceWriter
from bot.app import App
from bot.chats.sessions import SessionKey
from bot.ops.tracelog import LOG_FORMAT, TraceField
from bot.store import Trace
from bot.store.sqlite import SqliteStore
from bot.tree.model import utc_now
from tests.fakes.openai_api import Error, FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app, wait_for

CHAT = "recording:c1"


def fake_usage(fake: FakeOpenAI) -> list[int]:
    """The prompt tokens the fake reported for each request: a quarter of the characters, plus one."""
    return [sum(len(m.get("content") or "") for m in r["body"]["messages"]) // 4 + 1 for r in fake.requests]


async def run_trace(app: App) -> tuple[Trace, list[str | None]]:
    """The chat's only run: its stored trace and the trace id of each message on the path."""
    await app.hub.idle()
    await app.traces.drain()
    path = app.lanes.session(SessionKey("recording", "c1")).path
    ids = {m.trace_id for m in path} - {None}
    assert len(ids) == 1
    trace = await app.store.traces.get(CHAT, ids.pop() or "")
    assert trace is not None
    return trace, [m.trace_id for m in path]


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Log lines formatted as `bothub run` writes them, run trace field included."""
    caplog.handler.addFilter(TraceField())
    caplog.handler.setFormatter(logging.Formatter(LOG_FORMAT))
    caplog.set_level(logging.DEBUG, logger="bothub")
    return caplog


async def test_a_run_with_tool_calls_stores_model_tokens_and_each_call(tmp_path: Path, fake: FakeOpenAI,
                                                                       logs: pytest.LogCaptureFixture) -> None:
    rec = RecordingAdapter()
    fake.script(ToolCalls([("call_1", "list_files", "{}"), ("call_2", "read_file", '{"filepath": "test-key.txt"}')]),
                Text("There is nothing to read.", first_token_delay=0.05))
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("what is in my folder?")
        trace, on_path = await run_trace(app)
        assert await app.store.traces.get("recording:c2", trace.id) is None  # only through its own chat

    assert (trace.chat, trace.model, trace.outcome, trace.error_id) == (CHAT, "fake-model", "ok", None)
    usage = fake_usage(fake)
    assert (trace.prompt_tokens, trace.completion_tokens) == (sum(usage), 5)  # five streamed words
    model_1, listed, read, model_2 = trace.steps
    assert (model_1.kind, model_1.name, model_1.tool_calls, model_1.prompt_tokens) == ("model", "fake-model", 2,
                                                                                       usage[0])
    assert (model_2.tool_calls, model_2.prompt_tokens, model_2.completion_tokens) == (0, usage[1], 5)
    assert model_2.ttft_ms is not None and 50 <= model_2.ttft_ms <= model_2.duration_ms
    results = [m["content"] for m in fake.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert (listed.kind, listed.name, listed.arguments, listed.outcome, listed.result_chars) == (
        "tool", "list_files", "{}", "ok", len(results[0]))
    # the arguments keep their shape, the API key in them is masked; a missing file is the tool's error
    assert (read.name, read.arguments, read.outcome, read.result_chars) == (
        "read_file", '{"filepath": "***.txt"}', "error", len(results[1]))
    assert results[1].startswith("Error:")
    assert trace.ttft_ms is not None and trace.ttft_ms <= trace.duration_ms
    names = [s.name for s in trace.sections]
    assert names[0] == "SOUL" and names[-2:] == ["LANGUAGE", "history"] and "AVAILABLE TOOLS" in names
    assert all(s.tokens > 0 for s in trace.sections)
    assert trace.sections[-1].items == 1  # the history sent with the first request: the question
    assert on_path == [None, trace.id, trace.id, trace.id, trace.id]  # the user's message is not the run's

    tagged = [r for r in logs.records if getattr(r, "trace", "") == f" [trace {trace.id}]"]
    assert any(r.getMessage() == f"run ended ok in {CHAT}" for r in tagged)
    assert f"bothub.runner [trace {trace.id}]: run ended ok in {CHAT}" in logs.text
    assert all(r.trace == "" for r in logs.records if r.name == "bothub.app")  # start-up is no run's


async def test_a_failed_run_keeps_the_error_id_the_user_saw(tmp_path: Path, fake: FakeOpenAI,
                                                            logs: pytest.LogCaptureFixture) -> None:
    rec = RecordingAdapter()
    fake.script(Error(500))
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("hello?")
        await app.hub.idle()
        await app.traces.drain()
        failed = [r for r in logs.records if r.getMessage().startswith("agent run failed [")]
        assert len(failed) == 1
        error_id = failed[0].getMessage().split("[")[1].split("]")[0]
        assert error_id in rec.texts()[-1]
        trace_id = failed[0].trace.removeprefix(" [trace ").removesuffix("]")
        trace = await app.store.traces.get(CHAT, trace_id)
    assert trace is not None
    assert (trace.outcome, trace.error_id, trace.prompt_tokens) == ("failed", error_id, 0)
    assert [(s.kind, s.outcome) for s in trace.steps] == [("model", "error")]


async def test_the_trace_is_written_once_after_the_answer_is_shown(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    fake.script(ToolCalls([("call_1", "list_files", "{}")]), Text("Nothing there."))
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        writes: list[tuple[int, list[str]]] = []  # (traces in the write, what the chat showed at that moment)
        add = app.store.traces.add

        async def recorded(traces: Sequence[Trace], keep_per_chat: int) -> None:
            writes.append((len(traces), rec.texts()))
            await add(traces, keep_per_chat)

        app.store.traces.add = recorded  # type: ignore[method-assign]
        await rec.say("anything here?")
        await run_trace(app)
    assert writes == [(1, ["Nothing there."])]


class GatedTraces:
    """A trace store whose writes wait for a gate: shows what accumulates while one write is in flight."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.batches: list[list[str]] = []

    async def add(self, traces: Sequence[Trace], keep_per_chat: int) -> None:
        self.batches.append([t.id for t in traces])
        await self.gate.wait()


def finished(n: int) -> Trace:
    run = RunTrace(f"test:{n}", None, "m")
    run.observe(RunFinished("done"))
    return run.trace()


async def test_runs_ending_during_a_write_go_together_in_the_next_one() -> None:
    store = GatedTraces()
    writer = TraceWriter(store, keep_per_chat=10)  # type: ignore[arg-type]
    traces = [finished(n) for n in range(6)]
    writer.submit(traces[0])
    await wait_for(lambda: len(store.batches) == 1)
    for trace in traces[1:]:
        writer.submit(trace)  # the first write is still waiting on the database
    store.gate.set()
    await writer.drain()
    assert store.batches == [[traces[0].id], [t.id for t in traces[1:]]]
    assert [t.outcome for t in traces] == ["ok"] * 6


async def test_runs_ending_within_the_window_are_stored_in_one_write() -> None:
    store = GatedTraces()
    store.gate.set()
    writer = TraceWriter(store, keep_per_chat=10)  # type: ignore[arg-type]
    traces = [finished(n) for n in range(5)]
    for trace in traces:  # one chat answered message after message
        writer.submit(trace)
        await asyncio.sleep(0.02)
    await wait_for(lambda: len(store.batches) == 1)
    assert store.batches == [[t.id for t in traces]]


async def test_housekeeping_prunes_traces_past_keep_days(tmp_path: Path, fake: FakeOpenAI) -> None:
    store = SqliteStore(tmp_path / "data" / "bothub.sqlite3")
    await store.open()
    old, new = finished(1), finished(2)
    await store.traces.add([replace(old, started_at=utc_now() - timedelta(days=15)), new], keep_per_chat=10)
    await store.close()
    async with running_app(tmp_path, fake.base_url) as app:  # keep_days: 14 by default
        await app.purge()  # what the hourly housekeeping runs (its first pass, at start, may have done it already)
        assert await app.store.traces.get(old.chat, old.id) is None
        assert await app.store.traces.get(new.chat, new.id) == new


async def test_a_failed_write_is_logged_and_the_next_runs_are_still_stored(caplog: pytest.LogCaptureFixture) -> None:
    class FlakyTraces(GatedTraces):
        async def add(self, traces: Sequence[Trace], keep_per_chat: int) -> None:
            self.batches.append([t.id for t in traces])
            if len(self.batches) == 1:
                raise OSError("disk full")

    store = FlakyTraces()
    writer = TraceWriter(store, keep_per_chat=10)  # type: ignore[arg-type]
    lost, kept = finished(1), finished(2)
    writer.submit(lost)
    await writer.drain()
    writer.submit(kept)
    await writer.drain()
    assert store.batches == [[lost.id], [kept.id]]
    assert [r.getMessage() for r in caplog.records if r.name == "bothub.traces"] == [
        "could not store 1 run trace(s)"]


async def test_escaped_chinese_in_tool_arguments_is_stored_readable(tmp_path: Path, fake: FakeOpenAI) -> None:
    """Item 11: traces showed `\\u7528\\u6237…` where the model had asked for 用户."""
    rec = RecordingAdapter()
    fake.script(ToolCalls([("call_1", "read_file", '{"filepath": "\\u7528\\u6237.txt"}')]), Text("没有这个文件。"))
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("读一下用户.txt")
        trace, _ = await run_trace(app)
    assert trace.steps[1].arguments == '{"filepath": "用户.txt"}'
