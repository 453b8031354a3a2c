"""`shell(command)`: runs in the chat's own folder, only after a person approves it in the chat.

Three classes (seed 001, judged in `shell_policy.py`): blocked or unreadable commands never run and
never ask; destructive ones ask with a loud warning; everything else asks normally. An approved command
runs in a bubblewrap sandbox (`sandbox.py`) that sees only this chat's folder; with `tools.shell_network`
its only way out is the egress proxy to public addresses (`egress.py`, served inside by `netns.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal

from bot.agent.approvals import Approvals, Decision
from bot.agent.tools import cgroups, egress, netns, sandbox
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.agent.tools.shell_policy import judge

log = logging.getLogger("bothub.shell")

MAX_OUTPUT_CHARS = 20_000
_READ_LIMIT = 256 * 1024  # bytes kept from the process; the rest is drained and dropped


def register(registry: ToolRegistry, approvals: Approvals, timeout: float, enabled: bool,
             network: egress.Policy | None = None) -> None:
    """Offers `shell` only when enabled and the sandbox (and its network, when asked for) works here; otherwise
    says why in the log — never a command with more network than configured."""
    if not enabled:
        return
    if why := sandbox.problem() or (network and sandbox.network_problem()):
        log.error("the shell tool is disabled: %s", why)
        return

    async def shell(ctx: ToolContext, command: str) -> str:
        if not isinstance(command, str) or not command.strip():
            return "Error: give a shell command to run."
        judgement = judge(command)
        if judgement.refusal:
            return f"Refused: this command is blocked by the safety policy ({judgement.refusal}). It was not run."
        decision = await approvals.ask(ctx, command, judgement.destructive)
        if decision is Decision.DENIED:
            return "The user denied this command; it was not run. Do not retry it; ask what they want instead."
        if decision is Decision.EXPIRED:
            return "No decision was made in time, so the command was not run."
        if decision is Decision.NOT_ADMIN:
            return ("Only a person with admin rights may approve shell commands, and the person asking is not an "
                    "admin, so the command was not run. Do not retry it.")
        if decision is Decision.UNAVAILABLE:
            return "Shell commands need approval in the chat, which is not possible here; the command was not run."
        return await run_command(command, ctx, timeout, network)

    registry.register(
        "shell",
        "Run a shell command in this chat's working folder. A person must approve every command in the chat.",
        {"type": "object", "properties": {"command": {"type": "string", "description": "The command line"}},
         "required": ["command"]},
        shell,
    )


async def run_command(command: str, ctx: ToolContext, limit_seconds: float, network: egress.Policy | None = None,
                      limits: sandbox.Limits = sandbox.DEFAULT_LIMITS) -> str:
    """Runs `command` in the sandbox (see sandbox.py) with the chat's folder as its working folder; with a
    network policy, reaching out only through the egress proxy."""
    await asyncio.to_thread(ctx.workdir.mkdir, mode=0o700, parents=True, exist_ok=True)
    launch = netns.Launch() if network else None
    argv = sandbox.command_line(command, ctx.workdir, launch, limits)
    try:
        group = await asyncio.to_thread(cgroups.command_group, limits.memory_bytes, limits.processes)
    except OSError as e:
        log.error("a command's cgroup could not be made: %s", e)
        return f"Error: the command's own cgroup could not be made ({e}), so it was not run."
    try:
        return await _run(group.wrap(argv) if group else argv, limit_seconds, launch, network)
    finally:
        if launch is not None:
            launch.close()
        if group is not None:
            await asyncio.shield(asyncio.to_thread(group.close))


async def _run(argv: list[str], limit_seconds: float, launch: netns.Launch | None,
               network: egress.Policy | None) -> str:
    proc = await asyncio.create_subprocess_exec(
        *argv, env=sandbox.LAUNCH_ENV, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, start_new_session=True,  # own group: a timeout kills its children too
        pass_fds=launch.child_fds() if launch else ())
    proxy: tuple[asyncio.Server, egress.Proxy] | None = None
    try:
        async with asyncio.timeout(limit_seconds):
            if launch is not None and network is not None:
                proxy = await egress.serve(await asyncio.to_thread(launch.listener), network)
                launch.release()
            output = await _read_capped(proc)
            code = await proc.wait()
    except TimeoutError:
        return f"Error: the command ran longer than {limit_seconds:g} s and was stopped."
    except netns.Unavailable as e:
        log.error("the sandbox's network could not be set up: %s", e)
        return f"Error: the sandbox's network could not be set up ({e}), so the command was not run."
    finally:
        if proc.returncode is None:  # timed out, or the run was stopped (/stop, deadline, shutdown)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await asyncio.shield(proc.wait())
        if proxy is not None:
            proxy[0].close()
            await asyncio.shield(proxy[1].close())
    text = output.decode("utf-8", errors="replace")
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"\n… [output cut at {MAX_OUTPUT_CHARS} characters]"
    return f"exit code {code}\n{text}".rstrip()


async def _read_capped(proc: asyncio.subprocess.Process) -> bytes:
    assert proc.stdout is not None
    kept = bytearray()
    while chunk := await proc.stdout.read(65536):
        if len(kept) < _READ_LIMIT:
            kept += chunk[: _READ_LIMIT - len(kept)]
    return bytes(kept)
