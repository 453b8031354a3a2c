"""`shell(command)`: runs in the chat's own folder, only after a person approves it in the chat.

Three classes (seed 001): blocked commands never run and never ask; destructive ones ask with a loud
warning; everything else asks normally. The child gets a minimal environment, so tokens and API keys
in the bot's environment cannot be printed by `env`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal

from bot.agent.approvals import Approvals, Decision
from bot.agent.tools.registry import ToolContext, ToolRegistry

MAX_OUTPUT_CHARS = 20_000
_READ_LIMIT = 256 * 1024  # bytes kept from the process; the rest is drained and dropped
_SHELLS = r"(?:ba|z|da|k|fi|c|tc)?sh"
_SYSTEM_DIRS = r"(?:etc|usr|bin|sbin|boot|lib|lib64|var|root|sys|proc|dev|opt|home)"
_PROTECTED_DIRS = r"(?:etc|usr|bin|sbin|boot|lib|lib64|sys|proc|root)"  # never written to (/dev/null is fine)

BLOCKED: list[tuple[str, re.Pattern[str]]] = [(reason, re.compile(rx, re.IGNORECASE)) for reason, rx in [
    ("deletes the root, home or all", r"\brm\s+(?:-{1,2}[\w-]+\s+)*(?:/\*?|~/?\*?|\*|\$home/?\*?)(?:\s|$|[;&|])"),
    ("deletes a system folder", rf"\brm\s+.*\s/{_SYSTEM_DIRS}/?\*?(?:\s|$|[;&|])"),
    ("--no-preserve-root", r"--no-preserve-root"),
    ("fork bomb", r"(\w+|:)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1"),
    ("dd onto a device", r"\bdd\b.*\bof=/dev/"),
    ("formats or wipes a disk", r"\b(?:mkfs(?:\.\w+)?|fdisk|sfdisk|parted|wipefs|mkswap)\b"),
    ("writes to a raw disk device", r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)"),
    ("writes into a system folder", rf">\s*/{_PROTECTED_DIRS}/"),
    ("pipes into a shell or interpreter", rf"\|\s*(?:sudo\s+)?(?:{_SHELLS}|python\d*(?:\.\d+)?|perl|ruby|node)\b"),
    ("runs a command through a nested shell", rf"(?:^|[\s;&|(`$])(?:/\S*/)?{_SHELLS}\s+(?:-\w+\s+)*-\w*c"),
    ("eval/exec bypass", r"(?:^|[\s;&|(`])(?:eval|exec)\b"),
    ("absolute path to rm", r"(?:^|[\s;&|(`])/(?:usr/)?s?bin/rm\b"),
    ("runs as another user", r"(?:^|[\s;&|(`])(?:sudo|su|doas|pkexec)\b"),
    ("opens everything to everyone", r"\bch(?:mod|own)\s+(?:-\w+\s+)*\S+\s+/(?:\s|$|\*)"),
    ("shuts the machine down", r"(?:^|[\s;&|(`])(?:shutdown|reboot|halt|poweroff)\b|\binit\s+[06]\b"),
    ("kills every process", r"\bkill\s+-\w+\s+-1\b"),
]]

DESTRUCTIVE = re.compile(
    r"(?:^|[\s;&|(`])(?:rm|rmdir|mv|chmod|chown|truncate|shred|unlink|dd)\b|\bsed\s+(?:-\w+\s+)*-i"
    r"|\bgit\s+(?:reset\s+--hard|clean|push\s+.*--force|checkout\s+--|branch\s+-D)|\bfind\b.*\s-delete\b"
    r"|(?:^|[^>&\d])>(?!>|&)",
    re.IGNORECASE,
)


def _normalize(command: str) -> str:
    """Drop quotes and backslashes (r''m, r\\m) and squeeze spaces, so spelling tricks still match."""
    return re.sub(r"\s+", " ", re.sub(r"[\"'\\]", "", command)).strip()


def blocked_reason(command: str) -> str | None:
    text = _normalize(command)
    return next((reason for reason, rx in BLOCKED if rx.search(text)), None)


def is_destructive(command: str) -> bool:
    return DESTRUCTIVE.search(_normalize(command)) is not None


def register(registry: ToolRegistry, approvals: Approvals, timeout: float, enabled: bool) -> None:
    if not enabled:
        return

    async def shell(ctx: ToolContext, command: str) -> str:
        if not isinstance(command, str) or not command.strip():
            return "Error: give a shell command to run."
        if reason := blocked_reason(command):
            return f"Refused: this command is blocked by the safety policy ({reason}). It was not run."
        decision = await approvals.ask(ctx, command, is_destructive(command))
        if decision is Decision.DENIED:
            return "The user denied this command; it was not run. Do not retry it; ask what they want instead."
        if decision is Decision.EXPIRED:
            return "No decision was made in time, so the command was not run."
        if decision is Decision.UNAVAILABLE:
            return "Shell commands need approval in the chat, which is not possible here; the command was not run."
        return await run_command(command, ctx, timeout)

    registry.register(
        "shell",
        "Run a shell command in this chat's working folder. A person must approve every command in the chat.",
        {"type": "object", "properties": {"command": {"type": "string", "description": "The command line"}},
         "required": ["command"]},
        shell,
    )


async def run_command(command: str, ctx: ToolContext, limit_seconds: float) -> str:
    await asyncio.to_thread(ctx.workdir.mkdir, parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(ctx.workdir), "LANG": "C.UTF-8",
           "TERM": "dumb"}
    proc = await asyncio.create_subprocess_shell(
        command, cwd=ctx.workdir, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, start_new_session=True)  # own group: a timeout kills its children too
    try:
        async with asyncio.timeout(limit_seconds):
            output = await _read_capped(proc)
            code = await proc.wait()
    except TimeoutError:
        return f"Error: the command ran longer than {limit_seconds:g} s and was stopped."
    finally:
        if proc.returncode is None:  # timed out, or the run was stopped (/stop, deadline, shutdown)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await asyncio.shield(proc.wait())
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
