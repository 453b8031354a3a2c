"""What run traces cost the hub per answered message, measured apart from the noise of a whole hub run:
recording (a trace fed a typical answer's events, then turned into its record) and storing on SQLite, one
trace per write (a quiet hub) and fifty per write (what the writer batches while a write is in flight).
`bench/scale.py` gives the whole hub's CPU per message, to compare with the commit before traces.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.common import Section
from bot.agent.events import ModelTurn, RunFinished, StepMessage, TextDelta
from bot.agent.prompt import PromptBuilder
from bot.agent.skills import SkillSet
from bot.agent.tokens import TokenCounter
from bot.agent.trace import RunTrace
from bot.agent.workspace import prepare_workspace
from bot.store.sqlite import SqliteStore
from bot.store.traces import Trace

RUNS = 2000
WORDS = 40  # streamed pieces of a typical short answer
HISTORY = 20  # messages sent with the question


def _recorded(sections: list[tuple[str, str]], history: list[dict[str, str]], counter: TokenCounter) -> Trace:
    run = RunTrace("bench:1", "conv1", "fake-model")
    run.prompt(sections, counter)
    run.history(history, counter)
    for n in range(WORDS):
        run.observe(TextDelta(f"word{n} "))
    run.observe(ModelTurn("fake-model", 0.4, 0.1, 900, WORDS, 0))
    run.observe(StepMessage("assistant", "…"))
    run.observe(RunFinished("…"))
    return run.trace()


async def run() -> Section:
    sec = Section("Run traces: cost per answered message")
    with tempfile.TemporaryDirectory() as d:
        workspace = Path(d) / "workspace"
        prepare_workspace(workspace)
        prompts = PromptBuilder(workspace, SkillSet.load(workspace / "skills"))
        sections = prompts.sections("default", ["read_file", "write_file", "list_files"], ["likes tea"], "hello")
        history = [{"role": "user" if n % 2 == 0 else "assistant", "content": f"message {n} " * 12}
                   for n in range(HISTORY)]
        counter = TokenCounter()
        started = time.process_time()
        traces = [_recorded(sections, history, counter) for _ in range(RUNS)]
        recording = (time.process_time() - started) / RUNS
        store = SqliteStore(Path(d) / "bothub.sqlite3")
        await store.open()
        try:
            started = time.process_time()
            for trace in traces[: RUNS // 2]:
                await store.traces.add([trace], keep_per_chat=200)
            single = (time.process_time() - started) / (RUNS // 2)
            rest = traces[RUNS // 2:]
            started = time.process_time()
            for at in range(0, len(rest), 50):
                await store.traces.add(rest[at:at + 50], keep_per_chat=200)
            batched = (time.process_time() - started) / len(rest)
        finally:
            await store.close()
    sec.add(f"recording one run's trace ({len(sections)} prompt sections, {HISTORY} history messages, "
            f"{WORDS} text pieces)", f"{recording * 1e6:.0f} µs CPU")
    sec.add("storing it on SQLite, one trace per write (cap of 200 per chat applied)", f"{single * 1e6:.0f} µs CPU")
    sec.add("storing it on SQLite, 50 traces per write", f"{batched * 1e6:.0f} µs CPU")
    sec.add("trace size (sections and steps as stored)", f"{len(traces[0].detail_json())} bytes")
    sec.notes.append("CPU of this process (time.process_time), the database thread included.")
    return sec


if __name__ == "__main__":
    from bench.common import run_standalone

    run_standalone(run)
