"""Secrets in the real `bothub` process (issue 11, points 3, 7 and 8): its output, its environment, its files.

Each test runs a separate Python process and reads what it really wrote to stdout and stderr, so a
library that prints through a handler of its own is caught, not only the root logger.
"""

from __future__ import annotations

import asyncio
import json
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.reliability.test_process import REPO, child_env, write_config


def run_code(code: str, *args: str, env: dict[str, str]) -> tuple[int, str]:
    """`python -c code args…` in the repo; importing the Lark SDK alone can take 20 s on a loaded machine."""
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=180)
    return done.returncode, done.stdout + done.stderr

APP_SECRET = "lark-app-secret-" + "Q7w9E2r4T6y8U0i1"
API_KEY = "sk-" + "Zx81Cv72Bn63Mm54Ll45"


@pytest.mark.timeout(240)  # a process importing the Lark SDK; slow on a loaded machine
@pytest.mark.parametrize("lark_first", [True, False], ids=["sdk-imported-before-main", "sdk-imported-after"])
def test_the_lark_sdks_own_handler_is_routed_through_redaction(tmp_path: Path, lark_first: bool) -> None:
    sdk = "import lark_oapi; "
    code = ("import logging, sys; " + (sdk if lark_first else "")
            + "from bot.cli import main; main.main(sys.argv[1:]); " + ("" if lark_first else sdk)
            + f"logging.getLogger('Lark').error('token request: app_secret=%s', {APP_SECRET!r})")
    config = write_config(tmp_path)
    rc, output = run_code(code, "--config", str(config), "init", str(tmp_path / "ws"),
                          env=child_env(FEISHU_APP_ID="cli_test", FEISHU_APP_SECRET=APP_SECRET))
    assert rc == 0, output
    assert APP_SECRET not in output
    assert "token request: app_secret=***" in output
    assert "[Lark]" not in output  # the SDK's own stdout handler is gone; the record went to ours


@pytest.mark.timeout(240)
def test_no_child_process_inherits_a_secret(tmp_path: Path) -> None:
    code = ("import os, subprocess, sys; from bot.cli import main; main.main(sys.argv[1:]); "
            "print(subprocess.run(['env'], capture_output=True, text=True).stdout)")
    config = write_config(tmp_path)
    rc, output = run_code(code, "--config", str(config), "init", str(tmp_path / "ws"),
                          env=child_env(OPENAI_API_KEY=API_KEY, FEISHU_APP_SECRET=APP_SECRET, FEISHU_APP_ID="cli_x"))
    assert rc == 0, output
    assert API_KEY not in output and APP_SECRET not in output
    assert "OPENAI_API_KEY=" not in output and "FEISHU_APP_SECRET=" not in output
    assert "FEISHU_APP_ID=cli_x" in output  # an id is no secret: only secrets are dropped


@pytest.mark.timeout(240)
async def test_the_database_and_folders_are_private(tmp_path: Path) -> None:
    llm = FakeOpenAI()
    await llm.start()
    try:
        config = write_config(tmp_path)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "--config", str(config), "chat", cwd=REPO, env=child_env(llm),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(b"hello there\n"), 180)
    finally:
        await llm.stop()
    assert proc.returncode == 0 and b"hello there" in out, out
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "data").iterdir()}
    assert modes["bothub.sqlite3"] == 0o600
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
    assert all(mode & 0o077 == 0 for mode in modes.values()), json.dumps({k: oct(v) for k, v in modes.items()})


@pytest.mark.timeout(240)
async def test_sigterm_ends_piped_input_within_the_grace(tmp_path: Path) -> None:
    """A script whose input has ended stops on SIGTERM, even while a shell approval is pending (it kept a run
    alive for ten minutes)."""
    llm = FakeOpenAI()
    llm.script(ToolCalls([("s1", "shell", json.dumps({"command": "ls"}))]), Text("done"))
    await llm.start()
    try:
        config = write_config(tmp_path, shutdown_grace=1.0, tools={"shell_enabled": True})
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "--config", str(config), "chat", cwd=REPO, env=child_env(llm),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"list my files\n")
        await proc.stdin.drain()
        proc.stdin.close()  # the end of the script: nobody is left to approve
        shown = b""
        while b"/approve" not in shown:
            shown += await asyncio.wait_for(proc.stdout.read(100), 120)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
        took = time.monotonic() - started
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await llm.stop()
    assert took < 10, f"SIGTERM took {took:.1f} s"  # grace 1 s, plus a clean close on a loaded machine
