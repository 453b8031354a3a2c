"""The shell sandbox, against the real `bwrap`: what an approved command can and cannot reach.

These are the attacks from the security review (issue 11, point 3), run for real. They do not skip:
`.ci/run` installs bubblewrap, and a machine without it fails here, loudly.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.agent.approvals import Approvals
from bot.agent.tools import egress, sandbox, shell
from bot.agent.tools.registry import ToolContext, ToolRegistry

SECRET = "sk-SANDBOX-TEST-SECRET-0123456789"


@pytest.fixture
def chats(tmp_path: Path) -> tuple[Path, ToolContext]:
    """A data folder as the bot lays it out: the database beside chats/A and chats/B; we are chat B."""
    data = tmp_path / "data"
    (data / "chats" / "A").mkdir(parents=True)
    (data / "bothub.sqlite3").write_text("chat A said: the launch code is 1234")
    (data / "chats" / "A" / "diary.txt").write_text("chat A's private diary")
    return data, ToolContext(chat="test:B", workdir=data / "chats" / "B")


async def test_the_bots_environment_is_out_of_reach(chats: tuple[Path, ToolContext],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    _, ctx = chats
    out = await shell.run_command("tr '\\0' '\\n' < /proc/$PPID/environ; cat /proc/*/environ; env; echo end",
                                  ctx, 10)
    assert SECRET not in out and "OPENAI_API_KEY" not in out
    assert out.endswith("end")
    pids = await shell.run_command("ls /proc | grep -E '^[0-9]+$' | wc -l", ctx, 10)
    assert int(pids.split("\n")[1]) <= 6  # its own PID namespace: bwrap, bash and the pipeline, nothing else
    commands = await shell.run_command("cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo end", ctx, 10)
    assert "python" not in commands and commands.endswith("end")  # the bot's own process is not visible


async def test_other_chats_and_the_database_are_not_there(chats: tuple[Path, ToolContext]) -> None:
    data, ctx = chats
    out = await shell.run_command(
        f"cat ../../bothub.sqlite3 ../A/diary.txt {data}/bothub.sqlite3 {data}/chats/A/diary.txt; ls ..; echo end",
        ctx, 10)
    assert "launch code" not in out and "diary" not in out.replace("diary.txt", "")
    assert out.count("No such file or directory") == 4
    assert out.splitlines()[-2:] == ["B", "end"]  # the parent holds only this chat's own folder


async def test_the_chat_folder_is_writable_and_home_the_system_is_not(chats: tuple[Path, ToolContext]) -> None:
    _, ctx = chats
    out = await shell.run_command("echo kept > note.txt; echo $HOME; pwd; id -u; touch /usr/x; "
                                  "echo x > /etc/passwd; echo end", ctx, 10)
    assert (ctx.workdir / "note.txt").read_text() == "kept\n"
    assert f"{ctx.workdir.resolve()}\n{ctx.workdir.resolve()}\n65534\n" in out
    assert "touch: cannot touch '/usr/x': Read-only file system" in out
    assert "/etc/passwd: Read-only file system" in out


async def test_tmp_is_private(chats: tuple[Path, ToolContext], tmp_path: Path) -> None:
    _, ctx = chats
    marker = f"bothub-sandbox-{os.getpid()}"
    await shell.run_command(f"echo x > /tmp/{marker}", ctx, 10)
    assert marker not in os.listdir("/tmp")
    assert "No such file or directory" in await shell.run_command(f"ls /tmp/{marker}", ctx, 10)


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.create_server(("127.0.0.1", 0))
    yield server.getsockname()[1]
    server.close()


@pytest.mark.parametrize("network", [None, egress.Policy()])
async def test_the_hosts_loopback_is_out_of_reach(chats: tuple[Path, ToolContext], listener: int,
                                                  network: egress.Policy | None) -> None:
    """With or without `tools.shell_network`: the command's own network namespace (test_sandbox_network.py)."""
    _, ctx = chats
    probe = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {listener}), 3); print(\"up\")'"
    out = await shell.run_command(probe, ctx, 10, network=network)
    assert "exit code 1" in out and "ConnectionRefusedError" in out and "up" not in out


async def test_limits_stop_runaway_commands(chats: tuple[Path, ToolContext]) -> None:
    _, ctx = chats
    limits = sandbox.Limits(cpu_seconds=1, memory_bytes=256 * 1024 * 1024, file_bytes=1024 * 1024)
    big = await shell.run_command("head -c 3000000 /dev/zero > big.bin", ctx, 10, limits=limits)
    assert "File too large" in big or "exit code 153" in big  # SIGXFSZ
    assert (ctx.workdir / "big.bin").stat().st_size <= 1024 * 1024
    memory = await shell.run_command("python3 -c 'b = bytearray(600 * 1024 * 1024)'", ctx, 10, limits=limits)
    assert "MemoryError" in memory
    started = asyncio.get_running_loop().time()
    spin = await shell.run_command("python3 -c 'while True: pass'", ctx, 20, limits=limits)
    assert spin.startswith(("exit code 137", "exit code 152"))  # SIGKILL / SIGXCPU after 1 s of CPU
    assert asyncio.get_running_loop().time() - started < 10


async def test_without_bwrap_the_shell_is_not_offered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap anywhere on PATH
    sandbox.problem.cache_clear()
    try:
        registry = ToolRegistry()
        with caplog.at_level(logging.ERROR, "bothub.shell"):
            shell.register(registry, Approvals(), timeout=5, enabled=True)
        assert registry.names == []
        assert "the shell tool is disabled: `bwrap` (bubblewrap) is not installed: install bubblewrap" in caplog.text
    finally:
        monkeypatch.undo()
        sandbox.problem.cache_clear()
    assert sandbox.problem() is None  # and on this machine it works (CI installs it)


@pytest.mark.parametrize(("script", "said"), [
    ("echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1",
     "cannot create its namespaces here (bwrap: setting up uid map: Permission denied); unprivileged user "
     "namespaces must be allowed"),
    ("exit 1", "cannot create its namespaces here (1); unprivileged user namespaces must be allowed"),
], ids=["says-why", "silent"])
def test_a_bwrap_that_cannot_make_namespaces_says_what_it_said(tmp_path: Path, script: str, said: str) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    fake.chmod(0o755)
    assert sandbox.problem(str(fake)) == f"`{fake}` {said}"


def test_without_prlimit_the_sandbox_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bwrap").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))  # a bwrap, and nothing else
    assert sandbox.problem(str(tmp_path / "bwrap")) == "`prlimit` (util-linux) is not installed"
