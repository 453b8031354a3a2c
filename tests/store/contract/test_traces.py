"""Run traces: stored in one operation per batch, read back exactly, only by their own chat, capped per chat and
pruned by age; messages name the run that produced them."""

from __future__ import annotations

from datetime import timedelta

from bot.store import PromptSection, Store, Trace, TraceStep
from bot.tree.model import Message, utc_now

A, B = "test:a", "test:b"


def trace(n: int, chat: str = A, *, age: timedelta = timedelta()) -> Trace:
    steps = (TraceStep("model", "fake-model", 120, ttft_ms=40, prompt_tokens=300, completion_tokens=12, tool_calls=1),
             TraceStep("tool", "read_file", 0, outcome="error", arguments='{"filepath": "notes.txt"}',
                       result_chars=42),
             TraceStep("model", "fake-model", 80, ttft_ms=25, prompt_tokens=350, completion_tokens=9))
    sections = (PromptSection("SOUL", 210), PromptSection("MEMORY", 0), PromptSection("history", 95, items=3))
    return Trace(f"trace{n:03d}{chat[-1]}", chat, "conv1", utc_now() - age, "fake-model", "ok", 230, 61, 650, 21,
                 sections, steps)


async def test_a_trace_reads_back_exactly_and_only_in_its_own_chat(store: Store) -> None:
    first, failed = trace(1), Trace("trace002a", A, None, utc_now(), "m2", "failed", 5, None, 0, 0, (), (), "ab12cd34")
    await store.traces.add([first, failed, trace(3, B)], keep_per_chat=100)
    assert await store.traces.get(A, first.id) == first
    assert await store.traces.get(A, failed.id) == failed
    assert await store.traces.get(B, first.id) is None  # another chat's trace is not found, as an unknown id
    assert await store.traces.get(A, "trace003b") is None
    assert await store.traces.get(A, "nosuch") is None
    await store.traces.add([trace(1)], keep_per_chat=100)  # the same run again changes nothing
    assert await store.traces.get(A, first.id) == first


async def test_each_chat_keeps_only_its_newest_traces(store: Store) -> None:
    await store.traces.add([trace(n, B) for n in range(4)], keep_per_chat=10)
    for n in range(5):
        await store.traces.add([trace(n)], keep_per_chat=3)
    await store.traces.add([trace(5), trace(6)], keep_per_chat=3)  # a batch counts its own rows
    kept = [n for n in range(7) if await store.traces.get(A, f"trace{n:03d}a") is not None]
    assert kept == [4, 5, 6]
    assert [n for n in range(4) if await store.traces.get(B, f"trace{n:03d}b") is not None] == [0, 1, 2, 3]


async def test_old_traces_are_pruned_by_age(store: Store) -> None:
    await store.traces.add([trace(1, age=timedelta(days=20)), trace(2, B, age=timedelta(days=15)), trace(3)],
                           keep_per_chat=10)
    assert await store.traces.prune(utc_now() - timedelta(days=14)) == 2
    assert await store.traces.get(A, "trace001a") is None and await store.traces.get(B, "trace002b") is None
    assert await store.traces.get(A, "trace003a") is not None
    assert await store.traces.prune(utc_now() - timedelta(days=14)) == 0


async def test_messages_name_the_run_that_produced_them(store: Store) -> None:
    info = await store.conversations.create(A)
    question = Message.new("user", "hi")
    answer = Message.new("assistant", "hello", trace_id="trace001a")
    await store.conversations.append(A, info.id, [question, answer])
    found = await store.conversations.message(A, info.id, answer.id)
    assert found is not None and found.trace_id == "trace001a"
    chain = await store.conversations.chain(A, info.id, answer.id)
    assert [m.trace_id for m in chain] == [None, "trace001a"]
