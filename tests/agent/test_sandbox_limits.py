"""Whole-command limits (issue 28, point 5), against the real bwrap and this host's cgroups: memory and process
count bound a command's whole process tree, also for a bot running as root, and nothing is left behind."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from bot.agent.approvals import Approvals
from bot.agent.tools import cgroups, sandbox, shell
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.cli import doctor
from tests.harness import make_config

SMALL = sandbox.Limits(memory_bytes=300 * 2**20, processes=24)


SPAWN = """python3 -c "
import subprocess
started = []
try:
    for _ in range(80):
        started.append(subprocess.Popen(['sleep', '5']))
except OSError:
    pass
print('running', len(started))
"
"""


async def test_the_process_count_bounds_the_whole_command(ctx: ToolContext) -> None:
    out = await shell.run_command(SPAWN, ctx, 30, limits=SMALL)
    running = int(out.splitlines()[-1].split()[1])
    assert 10 < running < 24, out  # per process (and not at all for root) it would be all 80


async def test_memory_bounds_the_whole_command_not_each_process(ctx: ToolContext) -> None:
    hog = "python3 -c \"import time; b = b'x' * (120 * 2**20); time.sleep(2); print('kept')\""
    out = await shell.run_command(f"for i in 1 2 3 4; do {hog} & done; wait; echo end", ctx, 60, limits=SMALL)
    assert out.endswith("end") and out.splitlines().count("kept") < 4, out  # 4 x 120 MB do not fit in 300 MB
    alone = await shell.run_command(hog, ctx, 60, limits=SMALL)
    assert alone.endswith("kept")  # one of them does


async def test_each_command_gets_its_own_group_and_leaves_none_behind(ctx: ToolContext) -> None:
    found = cgroups.hierarchy()
    assert found is not None, cgroups.problem()
    running = asyncio.create_task(shell.run_command("(sleep 30 &); sleep 3; echo done", ctx, 30))
    for _ in range(200):
        groups = [p for parent in found.parents for p in parent.glob(f"bothub-{os.getpid()}-*")]
        if groups and all((g / "cgroup.procs").read_text().split() for g in groups):
            break
        await asyncio.sleep(0.05)
    assert len(groups) == len(found.parents)  # one folder per hierarchy, the command inside each
    assert all((g / "pids.max").read_text().strip() == "256" for g in groups if (g / "pids.max").exists())
    assert (await running).endswith("done")
    assert [p for parent in found.parents for p in parent.glob(f"bothub-{os.getpid()}-*")] == []  # ours only:
    # other bots (other test runs on this machine) may share the parent


def test_doctor_reports_the_limits_and_where_they_apply(tmp_path: Path) -> None:
    cfg, _ = make_config(tmp_path, "http://127.0.0.1:9", {"tools": {"shell_enabled": True}})
    lines = [text for _, text in doctor._check_shell(cfg)]
    checks = dict((text, mark) for mark, text in doctor._check_shell(cfg))
    found = cgroups.hierarchy()
    assert found is not None  # this machine gives the bot a cgroup (v1 here); doctor names the mode
    assert lines[:4] == [
        "shell: bubblewrap sandbox works",
        "shell: limits 60 s CPU, 1024 MB memory and 100 MB files per process, 30 s per command",
        f"shell: cgroup mode v{found.version}: 1024 MB and 256 processes for a command's whole tree "
        f"({', '.join(map(str, found.parents))})",
        "shell: network mode none: commands have no network (tools.shell_network: false)"]
    assert checks[lines[2]] == doctor.OK
    cfg, _ = make_config(tmp_path, "http://127.0.0.1:9", {"tools": {"shell_enabled": True, "shell_network": True},
                                                          "language": "zh"})
    net = doctor._check_shell(cfg)[3]
    assert net == (doctor.OK, doctor.t("zh", "doctor_shell_net_proxy")) and net[1].startswith("shell：网络模式 proxy")


async def test_a_group_without_its_limits_runs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hierarchy that lets the folder be made but offers no memory or pids file: no command runs unbounded."""
    fake = cgroups.Hierarchy(2, (tmp_path / "not-a-cgroup",))
    fake.parents[0].mkdir()
    monkeypatch.setattr(cgroups, "hierarchy", lambda: fake)
    ctx = ToolContext(chat="t:1", workdir=tmp_path / "chat")
    out = await shell.run_command("echo ran > ran.txt", ctx, 10)
    assert out.startswith("Error: the command's own cgroup could not be made (no memory or pids limit file in")
    assert not (ctx.workdir / "ran.txt").exists() and list(fake.parents[0].iterdir()) == []


def test_a_root_bot_without_cgroups_gets_no_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """Where no cgroup is writable (cgroup mode none), root's process count would be unbounded: no shell, and
    doctor says so on the cgroup line as well as the sandbox line. An ordinary user keeps the shell."""
    root = os.geteuid() == 0
    monkeypatch.setattr(cgroups, "hierarchy", lambda: None)
    sandbox.problem.cache_clear()
    try:
        registry = ToolRegistry()
        with caplog.at_level(logging.ERROR, "bothub.shell"):
            shell.register(registry, Approvals(), timeout=5, enabled=True)
        assert registry.names == ([] if root else ["shell"])
        assert ("the bot runs as root and no cgroup with the memory and pids" in caplog.text) is root
        cfg, _ = make_config(tmp_path, "http://127.0.0.1:9", {"tools": {"shell_enabled": True}})
        (first, _), _, (mark, line), _ = doctor._check_shell(cfg)
        assert (first, mark) == ((doctor.FAIL, doctor.FAIL) if root else (doctor.OK, doctor.INFO))
        assert line.startswith("shell: cgroup mode none: memory and process limits apply per process only")
    finally:
        monkeypatch.undo()
        sandbox.problem.cache_clear()
