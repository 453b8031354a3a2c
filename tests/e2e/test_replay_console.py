"""Replays on the console (piped `bothub chat`, a real SQLite file and chat folder): the run is answered again
with the tool results recorded in the tree — the tool that wrote a file is not called again — and the chat
shows the diff and both runs' figures; the replay is a side branch, the cursor stays."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import date
from pathlib import Path

from tests.e2e.test_console import chat, last_tree
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import answer_requests

WRITE = json.dumps({"filepath": "note.txt", "content": "version one"})


async def test_a_replay_uses_the_recorded_tool_result_and_shows_a_diff(tmp_path: Path, fake: FakeOpenAI) -> None:
    data = tmp_path / "data"
    fake.script(ToolCalls([("call_1", "write_file", WRITE)]), Text("I wrote the note.\nIt says version one."))
    await chat(data, fake.base_url, "write the note\n")
    [note] = data.rglob("note.txt")
    recorded = answer_requests(fake)[-1]["body"]["messages"][-1]
    assert recorded["role"] == "tool" and "note.txt" in recorded["content"]
    note.unlink()  # had the tool run again, the file would be back

    fake.script(ToolCalls([("call_9", "write_file", WRITE)]), Text("I wrote the note.\nIt now says version one."))
    out = await chat(data, fake.base_url, "/replay\n/tree\n")
    assert not note.exists()  # the replay called no tool
    replayed = answer_requests(fake)[-1]["body"]["messages"]
    assert replayed[-1] == {"role": "tool", "tool_call_id": "call_9", "content": recorded["content"]}
    assert [m["content"] for m in replayed if m["role"] == "user"] == ["write the note"]  # the same history
    assert "↻ Replay of #4 · gpt-4o-mini" in out
    assert "The replay of #4 changed 2 line(s):" in out
    assert "-It says version one." in out and "+It now says version one." in out
    assert "--- #4" in out and "+++ replay" in out
    assert "tokens" in out and "time" in out and "gpt-4o-mini" in out
    tree = last_tree(out)
    assert "[4] AI: I wrote the note. It says version one. ← you are here" in tree  # the cursor stayed
    assert "[7] AI: ↻ Replay of #4 · gpt-4o-mini" in tree  # the side branch, marked


async def test_bothub_replay_lists_the_changed_answers_of_a_chat(tmp_path: Path, fake: FakeOpenAI) -> None:
    data = tmp_path / "data"
    fake.script(ToolCalls([("call_1", "write_file", WRITE)]), Text("Done: version one."))  # then echoes
    await chat(data, fake.base_url, "write the note\nand say hello\n")
    [note] = data.rglob("note.txt")
    note.unlink()
    fake.script(ToolCalls([("call_2", "write_file", WRITE)]), Text("Done: version one, again."))
    env = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "test-key", "BOTHUB_LOG_LEVEL": "WARNING"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(data), "replay", "--chat", "console:local",
        "--since", date.today().isoformat(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **env}, cwd=tmp_path)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    said = out.decode()
    assert not note.exists()  # the recorded result stood in for the tool
    assert "changed: 1, unchanged: 1" in said
    rows = [line.split() for line in said.splitlines() if "  #" in line]
    assert [(r[1], r[2], r[3]) for r in rows] == [("#4", "changed", "2"), ("#6", "same", "0")]
    assert fake.pending == 0
    code, *_ = await asyncio.wait_for(asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(data), "replay", "--chat", "console:local", "--since",
        "last week", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, env={**os.environ, **env},
        cwd=tmp_path), 30), None
    assert await code.wait() == 2  # a polite refusal of a day it cannot read
