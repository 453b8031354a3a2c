"""File tools (seed 000): read_file, write_file, list_files — jailed to the chat's own folder.

Each tool shapes its own output for the model: big files come in line windows with a footer that says
how to ask for more, big folders start with a summary. Every path is walked from the folder one step at a
time without following links (bot/jail.py), so `..` above it, absolute paths and symlinks are refused.
File I/O runs in a thread.
"""

from __future__ import annotations

import asyncio
import io
import os
import stat
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bot import jail
from bot.agent.tools.registry import MAX_TOOL_OUTPUT, ToolContext, ToolRegistry

OUTSIDE = "Error: path is outside this chat's folder"
DEFAULT_LIMIT = 200  # lines per read_file window
MAX_LIMIT = 2000
MAX_LINE = 2000  # characters of one line shown; minified files would otherwise fill the whole window
MAX_ENTRIES = 200  # entries listed by list_files after the summary
MAX_WALK = 20_000  # entries a recursive listing looks at before it stops counting
MAX_READ_BYTES = 20 * 1024 * 1024  # read_file refuses bigger files instead of scanning them


class Refused(Exception):
    """A request the model should rephrase; the message is the tool's answer (other tool modules raise it too)."""


def _number(n: int) -> str:
    return f"{n:,}".replace(",", " ")


def shown(path: str) -> str:
    """A path as the model should write it: normalised, relative to the chat folder."""
    return "/".join(jail.parts(path)) or "."


def refusal(e: jail.Jailed) -> str:
    """The tool's answer for a path the jail does not open (bot/jail.py says why each rule exists)."""
    name = shown(e.path) if e.why is not jail.Why.OUTSIDE else ""
    if e.why is jail.Why.SPECIAL:
        return f"Error: {name} is not a regular file (a pipe, socket or device); refused"
    if e.why is jail.Why.SHARED:
        return f"Error: {name} has other hard links, which may lead outside this chat's folder; refused"
    if e.why is jail.Why.TOO_BIG:
        return f"Error: {name} is {_size(e.size)}; read_file reads files up to {_size(MAX_READ_BYTES)}"
    return OUTSIDE


def open_jailed(workdir: Path, filepath: str, write: bool) -> int:
    """A descriptor for a regular, singly linked file in the chat folder, reached without following links."""
    try:
        return jail.open_file(workdir, filepath, write, None if write else MAX_READ_BYTES)
    except jail.Jailed as e:
        raise Refused(refusal(e)) from None


def kind(workdir: Path, filepath: str) -> str | None:
    try:
        return jail.kind(workdir, filepath)
    except jail.Jailed as e:
        raise Refused(refusal(e)) from None


def _as_int(value: object, name: str) -> int:
    """The model sends numbers as JSON numbers or strings; anything else (lists, objects, "x") is refused."""
    if not isinstance(value, int | float | str):
        raise Refused(f"Error: {name} must be a whole number, got {value!r}")
    try:
        return int(value)
    except ValueError:
        raise Refused(f"Error: {name} must be a whole number, got {value!r}") from None


def _read(workdir: Path, filepath: str, offset: object, limit: object) -> str:
    start = max(0, _as_int(offset, "offset"))
    count = min(MAX_LIMIT, max(1, _as_int(limit, "limit")))
    found, name = kind(workdir, filepath), shown(filepath)
    if found == "dir":
        return f"Error: {name} is a folder; use list_files to see what is in it"
    if found is None:
        return f"Error: {name} does not exist"
    with io.TextIOWrapper(os.fdopen(open_jailed(workdir, filepath, write=False), "rb"), encoding="utf-8") as text:
        if b"\x00" in text.buffer.read(8192):
            return f"Error: {name} looks like a binary file; read_file only reads UTF-8 text"
        text.buffer.seek(0)
        try:
            window, total = _window(text, start, count)
        except UnicodeDecodeError as e:
            return f"Error: {name} is not UTF-8 text (bad byte at position {e.start}); read_file only reads text"
    if total == 0:
        return f"({name} is empty)"
    if start >= total:
        return f"Error: offset {start} is past the end of {name} ({_number(total)} lines)"
    end = start + len(window)
    body = "\n".join(window)
    if start == 0 and end == total:
        return body
    more = f"call read_file with offset={end} for more" if end < total else "end of file"
    return f"{body}\n\n[lines {_number(start + 1)}–{_number(end)} of {_number(total)}; {more}]"


def _window(f: io.TextIOWrapper, start: int, count: int) -> tuple[list[str], int]:
    """Lines start+1 … start+count (cut to fit the tool's output), and how many lines the file has."""
    window: list[str] = []
    budget = MAX_TOOL_OUTPUT - 500  # leave room for the footer, which must never be cut off
    total = 0
    for total, line in enumerate(f, start=1):
        if start < total <= start + count and budget > 0:
            line = line.rstrip("\n")
            if len(line) > MAX_LINE:
                line = line[:MAX_LINE] + f" … [line cut at {MAX_LINE} characters]"
            window.append(line)
            budget -= len(line) + 1
    return window, total


def _write(workdir: Path, filepath: str, content: str) -> str:
    if not isinstance(content, str):
        raise Refused("Error: content must be text")
    found, name = kind(workdir, filepath), shown(filepath)
    if found == "dir":
        return f"Error: {name} is a folder; give a file path"
    fd = open_jailed(workdir, filepath, write=True)  # missing folders on the way are made, links refused
    os.ftruncate(fd, 0)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(content)
    lines = content.count("\n") + 1
    return f"Wrote {_number(len(content))} characters ({_number(lines)} lines) to {name}"


@dataclass(frozen=True, slots=True)
class _Entry:
    path: PurePosixPath  # relative to the listed folder
    mode: int  # from lstat: a symlink is shown as one, never followed
    size: int

    @property
    def folder(self) -> bool:
        return stat.S_ISDIR(self.mode)

    def line(self) -> str:
        if stat.S_ISLNK(self.mode):
            return f"{self.path} (symlink)"
        return f"{self.path}/" if self.folder else f"{self.path} ({_size(self.size)})"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KB" if n < 1024**2 else f"{n / 1024**2:.1f} MB"


def _entry(fd: int, folder: str, name: str) -> _Entry:
    info = os.lstat(name, dir_fd=fd)
    return _Entry(PurePosixPath(folder, name), info.st_mode, info.st_size)


def _walk(base: int, recursive: bool) -> tuple[list[_Entry], bool]:
    """Entries under the folder `base` in a stable order, stopping at MAX_WALK; symlinks are never entered."""
    if not recursive:
        names = sorted(os.listdir(base))
        return [_entry(base, ".", n) for n in names[:MAX_WALK]], len(names) > MAX_WALK
    found: list[_Entry] = []
    for folder, dirs, files, fd in os.fwalk(".", dir_fd=base):
        dirs.sort()
        for name in sorted(dirs) + sorted(files):
            found.append(_entry(fd, folder, name))
            if len(found) >= MAX_WALK:
                return found, True
    return found, False


def _summary(entries: list[_Entry], capped: bool) -> str:
    files = [e for e in entries if not e.folder]
    folders = len(entries) - len(files)
    by_ext = Counter(e.path.suffix.lower() or "(no extension)" for e in files)
    top = Counter(e.path.parts[0] for e in entries if len(e.path.parts) > 1)
    count = f"at least {_number(len(entries))}" if capped else _number(len(entries))
    lines = [f"{count} entries: {_number(len(files))} files, {_number(folders)} folders",
             "by extension: " + ", ".join(f"{ext} {_number(n)}" for ext, n in by_ext.most_common(15))]
    if top:
        per_folder = ", ".join(f"{d}/ {_number(n)}" for d, n in top.most_common(15))
        lines.append(f"entries per top-level folder: {per_folder}")
    return "\n".join(lines)


def _list(workdir: Path, dirpath: str, recursive: object) -> str:
    found, name = kind(workdir, dirpath), shown(dirpath)
    if found is None:
        return f"Error: {name} does not exist"
    if found == "link":
        return OUTSIDE
    if found != "dir":
        return f"Error: {name} is a file; use read_file to read it"
    with jail.directory(workdir, dirpath) as base:
        entries, capped = _walk(base, bool(recursive))
    if not entries:
        return f"{name} is empty"
    lines = [e.line() for e in entries[:MAX_ENTRIES]]
    if len(entries) <= MAX_ENTRIES:
        return "\n".join(lines)
    rest = len(entries) - MAX_ENTRIES
    return (f"{_summary(entries, capped)}\n\nfirst {MAX_ENTRIES}:\n" + "\n".join(lines)
            + f"\n… and {_number(rest)}{'+' if capped else ''} more; list a subfolder to see them")


async def in_thread(func: Callable[..., str], *args: object) -> str:
    """Run blocking file work off the event loop; refusals and OS errors become the tool's answer."""
    return await answered(asyncio.to_thread(func, *args))


async def answered(work: Awaitable[str]) -> str:
    """The tool's answer: what `work` returns, or its refusal or OS error in words for the model."""
    try:
        return await work
    except Refused as e:
        return str(e)
    except PermissionError:
        return "Error: permission denied"
    except OSError as e:
        return f"Error: {e.strerror or type(e).__name__}"


async def read_file(ctx: ToolContext, filepath: str, offset: int = 0, limit: int = DEFAULT_LIMIT) -> str:
    return await in_thread(_read, ctx.workdir, filepath, offset, limit)


async def write_file(ctx: ToolContext, filepath: str, content: str) -> str:
    return await in_thread(_write, ctx.workdir, filepath, content)


async def list_files(ctx: ToolContext, dirpath: str = ".", recursive: bool = False) -> str:
    return await in_thread(_list, ctx.workdir, dirpath, recursive)


def register(registry: ToolRegistry) -> None:
    path = {"type": "string", "description": "Path relative to this chat's folder"}
    registry.register(
        "read_file",
        "Read a UTF-8 text file, a window of lines at a time. "
        "Big files end with a footer saying how to read more.",
        {"type": "object", "properties": {
            "filepath": path,
            "offset": {"type": "integer", "description": "Lines to skip from the start (default 0)"},
            "limit": {"type": "integer",
                      "description": f"Lines to read (default {DEFAULT_LIMIT}, max {MAX_LIMIT})"},
        }, "required": ["filepath"]},
        read_file,
    )
    registry.register(
        "write_file",
        "Write text to a file, replacing it if it exists; missing parent folders are created.",
        {"type": "object", "properties": {"filepath": path, "content": {"type": "string"}},
         "required": ["filepath", "content"]},
        write_file,
    )
    registry.register(
        "list_files",
        "List a folder. Big folders start with a summary (counts per extension and top-level folder).",
        {"type": "object", "properties": {
            "dirpath": {"type": "string", "description": "Folder relative to this chat's folder (default '.')"},
            "recursive": {"type": "boolean", "description": "Include everything below (default false)"},
        }},
        list_files,
    )
