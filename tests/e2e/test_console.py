"""The console chat as a user scripts it: piped stdin, a real subprocess, a real SQLite file."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

from tests.fakes.openai_api import Error, FakeOpenAI, Text, ToolCalls
from tests.harness import answer_requests

NO_RETRIES = Path(__file__).with_name("no_retries.yaml")


async def finished(proc: asyncio.subprocess.Process, stdin: bytes | None, within: float) -> tuple[bytes, bytes]:
    """The child's output once it exits; killed when it does not in time (a failed test's loop cannot close
    while its child still runs: the worker hung there)."""
    try:
        return await asyncio.wait_for(proc.communicate(stdin), within)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def chat(data_dir: Path, base_url: str, script: str, *extra: str) -> str:
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test-key", "BOTHUB_LOG_LEVEL": "WARNING"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(data_dir), "chat", *extra,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        cwd=data_dir.parent,
    )
    out, err = await finished(proc, script.encode(), 30)
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
    assert len(answer_requests(fake)) == 2


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
    _, err = await finished(proc, None, 30)
    assert proc.returncode == 2
    assert b"OPENAI_API_KEY" in err and b"OPENAI_BASE_URL" in err


async def bothub(data_dir: Path, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(data_dir), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=data_dir.parent,
    )
    out, err = await finished(proc, None, 30)
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


async def test_a_long_script_is_answered_line_by_line_in_order(tmp_path: Path) -> None:
    """Piped stdin is a script: nothing is refused as busy, commands keep their place among messages."""
    slow = FakeOpenAI(words_delay=0.01)  # every answer takes a moment: the old console queued past max_queue
    await slow.start()
    try:
        questions = [f"question {i} please, in a few more words than that" for i in range(1, 61)]
        script = "\n".join([*questions[:30], "/lang zh", "/help", *questions[30:], "/status", "/tree"]) + "\n"
        out = await chat(tmp_path / "data", slow.base_url, script)
    finally:
        await slow.stop()
    assert "still working" not in out and "还在处理" not in out
    answers = [line for line in out.splitlines() if line.startswith("question ")]
    assert answers == questions  # each echoed once, in order
    help_at = out.index("我是这个聊天里的助手")  # /help after /lang zh speaks Chinese…
    assert out.index("question 30 please") < help_at < out.index("question 31 please")  # …in its place
    assert "消息数：120" in out  # /status after the last answer counts every message
    tree = out.split("== 会话 ")[1]
    assert "光标：[120]" in out and "[120] AI: question 60 please" in tree
    assert "省略" in tree and len(tree) < 3600  # a long run collapses within a platform's budget
    assert len(answer_requests(slow)) == 60


async def test_a_script_exits_non_zero_when_answers_failed(tmp_path: Path) -> None:
    down = FakeOpenAI()
    await down.start()
    down.script(Error(500), Error(500))
    try:
        env = {**os.environ, "OPENAI_BASE_URL": down.base_url, "OPENAI_API_KEY": "test-key",
               "BOTHUB_LOG_LEVEL": "ERROR"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "chat", "--data-dir", str(tmp_path / "data"), "--config", str(NO_RETRIES),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
            cwd=tmp_path)
        out, err = await finished(proc, b"first\nsecond\n/status\n", 30)
    finally:
        await down.stop()
    assert proc.returncode == 1
    assert b"model provider failed" in out and b"2 answer(s) failed" in err


async def test_stop_in_a_script_prints_the_partial_answer_once(tmp_path: Path) -> None:
    words = " ".join(f"w{i}" for i in range(200))
    llm = FakeOpenAI()
    await llm.start()
    llm.script(Text(words, delay=0.05))
    env = {**os.environ, "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test-key", "BOTHUB_LOG_LEVEL": "WARNING"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "chat", "--data-dir", str(tmp_path / "data"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        cwd=tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"talk for a while\n")
        await proc.stdin.drain()
        shown = await asyncio.wait_for(proc.stdout.readuntil(b"w5 "), 20)  # the answer is streaming
        proc.stdin.write(b"/stop\n/tree\n")
        proc.stdin.close()
        rest, err = await finished(proc, None, 20)
    finally:
        await llm.stop()
    out = (shown + rest).decode()
    assert proc.returncode == 0, err.decode()
    said, tree = out.split("== Conversation")
    assert said.count("w0 w1 w2") == 1 and said.count("(interrupted)") == 1
    partial = said.split("\n\n(interrupted)")[0]
    assert partial.startswith("w0 w1 w2 w3 w4 w5 ") and "w199" not in partial
    assert out.index("(interrupted)") < out.index("Stopped. 0 queued")  # the partial, then the confirmation
    assert "AI: w0 w1 w2" in tree  # kept in the tree


async def test_a_piped_script_answers_an_approval(tmp_path: Path, fake: FakeOpenAI) -> None:
    """Issue 28: the `/approve` line used to wait for the answer that waited for it."""
    config = tmp_path / "shell.yaml"
    config.write_text("tools:\n  shell_enabled: true\n", encoding="utf-8")
    fake.script(ToolCalls([("s1", "shell", json.dumps({"command": "echo scripted > made.txt"}))]), Text("made it"))
    out = await chat(tmp_path / "data", fake.base_url, "make a file\n/approve\n/status\n", "--config", str(config))
    assert "[✅ Approve once: /approve " in out and "Approved: `echo scripted > made.txt`" in out
    assert "made it" in out and "Messages: 4" in out  # and /status waited for the answer
    told = fake.requests[1]["body"]["messages"][-1]
    assert told["tool_call_id"] == "s1" and told["content"].startswith("exit code 0")


async def test_chat_trace_prints_each_runs_steps_after_its_answer(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(ToolCalls([("c1", "list_files", "{}")]), Text("Your folder is empty."), Text("plain"))
    out = await chat(tmp_path / "data", fake.base_url, "what is in my folder?\nsay plain\n", "--trace")
    first, second = out.split("Your folder is empty.", 1)[1].split("plain", 1)
    lines = [line.strip() for line in first.splitlines() if line.strip()]
    assert re.match(r"trace [0-9a-f]{16} · ok · \d+ ms · first text \d+ ms · \d+ → \d+ tokens$", lines[0]), lines
    assert re.match(r"1\. model \S+  \d+ ms \(first token \d+ ms\)  \d+ → \d+ tokens, 1 tool call$", lines[1])
    assert re.match(r"2\. tool  list_files  \d+ ms  \{\} → \d+ chars$", lines[2])
    assert lines[3].startswith("3. model ") and lines[4].startswith("prompt: ")
    assert "history" in lines[4]
    assert re.search(r"trace [0-9a-f]{16} · ok", second)  # every run, not only the first
    plain = await chat(tmp_path / "other", fake.base_url, "without it\n")
    assert not re.search(r"trace [0-9a-f]{16}", plain)
