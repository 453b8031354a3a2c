"""The console chat as a user scripts it: piped stdin, a real subprocess, a real SQLite file."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

from tests.fakes.openai_api import FakeOpenAI


async def chat(data_dir: Path, base_url: str, script: str, *extra: str) -> str:
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test-key", "BOTHUB_LOG_LEVEL": "WARNING"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(data_dir), "chat", *extra,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        cwd=data_dir.parent,
    )
    out, err = await asyncio.wait_for(proc.communicate(script.encode()), 30)
    assert proc.returncode == 0, err.decode()
    return out.decode()


def last_tree(output: str) -> str:
    block = output.rsplit("== Conversation ", 1)[1]
    return "\n".join(line for line in block.splitlines()[1:] if line.startswith(("[", "├", "└", "│", " ")))


async def test_piped_script_branches_and_survives_restart(tmp_path: Path, fake: FakeOpenAI) -> None:
    data = tmp_path / "data"
    out = await chat(data, fake.base_url, "hello\n/tree\n/goto 1\nanother way\n/tree\n/new\n/list\n")
    tree = last_tree(out.split("New conversation")[0])
    assert "├─ [2] AI: hello" in tree
    assert "└─ [3] You: another way" in tree
    assert "[4] AI: another way ← you are here" in tree
    first_id = re.search(r"== Conversation (\w{8})", out).group(1)  # type: ignore[union-attr]
    assert f"/switch {first_id}" in out  # /list offers the old conversation

    again = await chat(data, fake.base_url, f"/switch {first_id}\n/tree\n")
    assert last_tree(again) == tree
    assert len(fake.requests) == 2


async def test_separate_local_chats_do_not_share_history(tmp_path: Path, fake: FakeOpenAI) -> None:
    data = tmp_path / "data"
    await chat(data, fake.base_url, "remember the word pineapple\n", "--chat", "alice")
    out = await chat(data, fake.base_url, "/list\n", "--chat", "bob")
    assert "pineapple" not in out


async def test_missing_llm_settings_explain_what_to_set(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(tmp_path), "run",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        cwd=tmp_path,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    assert b"OPENAI_API_KEY" in err and b"OPENAI_BASE_URL" in err


async def bothub(data_dir: Path, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(data_dir), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=data_dir.parent,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_export_and_import_round_trip_through_the_cli(tmp_path: Path, fake: FakeOpenAI) -> None:
    data = tmp_path / "data"
    out = await chat(data, fake.base_url, "first question\n/goto 1\nsecond branch\n/tree\n")
    conv_id = re.search(r"== Conversation (\w{8})", out).group(1)  # type: ignore[union-attr]

    code, jsonl, _ = await bothub(data, "export", conv_id, "--chat", "console:local")
    assert code == 0
    lines = [json.loads(line) for line in jsonl.splitlines()]
    assert lines[0]["type"] == "header" and {m["role"] for m in lines[1:]} == {"user", "assistant"}
    assert len(lines) == 5  # header + two users + two answers

    code, _, err = await bothub(data, "export", conv_id, "--chat", "console:someone-else")
    assert code == 1 and "no chat 'console:someone-else'" in err  # scoped by chat, like every query

    (tmp_path / "conv.jsonl").write_text(jsonl, encoding="utf-8")
    code, said, _ = await bothub(data, "import", str(tmp_path / "conv.jsonl"), "--chat", "console:other")
    assert code == 0 and "imported 4 messages" in said
    new_id = said.split("conversation ")[1].split()[0]
    again = await chat(data, fake.base_url, f"/switch {new_id}\n/tree\n", "--chat", "other")
    assert last_tree(again) == last_tree(out)
