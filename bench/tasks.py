"""Background tasks: what a sub-agent costs per step, and once per task, against the same work as a plain answer.

The real app (SQLite, agent loop, openai SDK) with a recording adapter and the fake model in this process,
scripted so that each run takes K tool steps (`recall`, a store query) before its answer. A plain run is a message
answered in its chat; a task is `/task` with the same prompt, timed until its result is posted back. The per-step
figure is the slope between K=1 and K=STEPS, so the fixed costs (a task's row and inbox entry, its progress
message, the side branch's first message, the post through the chat's lane) fall out of it and are shown apart.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Section, median, ms, run_standalone
from bench.hub import TimedAdapter
from bot.messages import ChatRef
from bot.replies import Reply
from tests.fakes.openai_api import FakeOpenAI, Step, Text, ToolCalls
from tests.harness import running_app

STEPS = 10
ROUNDS = 15
QUIET = {"log_level": "WARNING", "max_tasks": 50}


def stepping(steps: dict[str, int]) -> Any:
    """The fake model's answer: a `recall` call until the run has made its K steps, then the text."""
    def respond(body: dict[str, Any]) -> Step:
        users = [m for m in body["messages"] if m["role"] == "user"]
        prompt = str(users[-1]["content"]) if users else ""
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done < steps.get(prompt.split("] ", 1)[-1], 0):
            return ToolCalls([(f"call_{done}", "recall", '{"query": "anything"}')])
        return Text(f"answer to {prompt}")
    return respond


class Watching(TimedAdapter):
    """Notes when a chat first shows a message that starts with what is expected (a task's result has a head)."""

    def _seen(self, chat: ChatRef, reply: Reply) -> None:
        pending = self._waiting.get(chat.chat_id)
        if pending is not None and reply.text.startswith(pending[0]) and not pending[1].done():
            pending[1].set_result(time.perf_counter())

    async def timed(self, chat_id: str, text: str, expect: str) -> float:
        done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiting[chat_id] = (expect, done)
        started = time.perf_counter()
        await self.say(text, chat_id)
        return await asyncio.wait_for(done, 30) - started


async def _measure(rec: Watching, steps: dict[str, int], k: int, task: bool, n: int) -> float:
    """The median time of `n` runs of k steps, each in a fresh chat (no history grows between them)."""
    times = []
    for i in range(n):
        prompt = f"{'task' if task else 'plain'} {k} {i}"
        steps[prompt] = k
        if task:
            times.append(await rec.timed(f"{prompt}", f"/task {prompt}", "**Task t"))
        else:
            times.append(await rec.timed(f"{prompt}", prompt, f"answer to {prompt}"))
    return median(times)


async def run() -> Section:
    section = Section(f"Background tasks: a sub-agent against a plain run (K tool steps, median of {ROUNDS})")
    steps: dict[str, int] = {}
    fake = FakeOpenAI(responder=stepping(steps))
    await fake.start()
    rec = Watching()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with running_app(Path(tmp), fake.base_url, config=QUIET, adapters=(rec,)):
                await _measure(rec, steps, 1, False, 3)  # warm-up: imports, first connections
                await _measure(rec, steps, 1, True, 3)
                plain_1 = await _measure(rec, steps, 1, False, ROUNDS)
                plain_k = await _measure(rec, steps, STEPS, False, ROUNDS)
                task_1 = await _measure(rec, steps, 1, True, ROUNDS)
                task_k = await _measure(rec, steps, STEPS, True, ROUNDS)
    finally:
        await fake.stop()
    plain_step, task_step = (plain_k - plain_1) / (STEPS - 1), (task_k - task_1) / (STEPS - 1)
    section.add("plain run, 1 step → answer shown", ms(plain_1))
    section.add(f"plain run, {STEPS} steps → answer shown", ms(plain_k))
    section.add("task, 1 step → result posted", ms(task_1))
    section.add(f"task, {STEPS} steps → result posted", ms(task_k))
    section.add("per step: plain run", ms(plain_step))
    section.add("per step: task", ms(task_step))
    section.check("per step: a task's overhead over a plain run", (task_step - plain_step) * 1000, 5, "ms", fmt=".2f")
    section.check("per task: fixed overhead (row, entry, progress, branch, post)", (task_1 - plain_1) * 1000, 100,
                  "ms", fmt=".1f")
    section.notes.append("the fake model runs in this process (tool steps need its script), so its CPU is counted "
                         "in both columns alike; progress edits are paced at the recording platform's 50 ms")
    return section


if __name__ == "__main__":
    run_standalone(run)
