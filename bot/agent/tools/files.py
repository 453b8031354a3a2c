"""File tools (seed 000): read_file, write_file, list_files — jailed to the chat's own folder.

Each tool shapes its own output for the model: big files come in line windows with a footer that says
how to ask for more, big folders start with a summary. Every path is resolved with realpath, so `..`,
absolute paths and symlinks that lead out of the folder are refused. File I/O runs in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import stat
from collections import Counter
from collections.abc import Callable
from pathlib import Path

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


def jailed(workdir: Path, path: str) -> Path:
    """The real path of `path` inside the chat folder (created on first use), or Refused."""
    if not isinstance(path, str) or "\x00" in path:
        raise Refused("Error: the path must be a plain text string")
    root = os.path.realpath(workdir)
    os.makedirs(root, mode=0o700, exist_ok=True)
    target = os.path.realpath(os.path.join(root, path))
    if target != root and not target.startswith(root + os.sep):
        raise Refused(OUTSIDE)
    return Path(target)


def open_jailed(workdir: Path, target: Path, write: bool) -> int:
    """A descriptor for `target` that provably is a regular file inside the chat folder.

    `O_NOFOLLOW` refuses a symlink swapped in after `realpath`; the opened descriptor is checked again
    (where it really points, its type, its link count), because a hard link inside the folder may be
    the same file as one outside it, and FIFOs or devices would hang or leak.
    """
    name = _shown(workdir, target)
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.lstat(target).st_mode):  # opening a FIFO or socket fails or blocks: ask first
            raise Refused(f"Error: {name} is not a regular file (a pipe, socket or device); refused")
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_WRONLY | os.O_CREAT if write else os.O_RDONLY)
    try:
        fd = os.open(target, flags, 0o600)
    except OSError as e:
        if e.errno == 40:  # ELOOP: a symlink appeared at the last moment
            raise Refused(OUTSIDE) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"Error: {name} is not a regular file (a pipe, socket or device); refused")
        if info.st_nlink > 1:
            raise Refused(f"Error: {name} has other hard links, which may lead outside this chat's folder; refused")
        real = os.path.realpath(f"/proc/self/fd/{fd}") if os.path.isdir("/proc/self/fd") else str(target)
        root = os.path.realpath(workdir)
        if not real.startswith(root + os.sep):
            raise Refused(OUTSIDE)
        if not write and info.st_size > MAX_READ_BYTES:
            raise Refused(f"Error: {name} is {_size(info.st_size)}; read_file reads files up to "
                           f"{_size(MAX_READ_BYTES)}")
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _shown(root: Path, target: Path) -> str:
    """A path as the model should write it: relative to the chat folder."""
    relative = os.path.relpath(target, os.path.realpath(root))
    return "." if relative == "." else relative


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
    target = jailed(workdir, filepath)
    name = _shown(workdir, target)
    if target.is_dir():
        return f"Error: {name} is a folder; use list_files to see what is in it"
    if not target.exists():
        return f"Error: {name} does not exist"
    with io.TextIOWrapper(os.fdopen(open_jailed(workdir, target, write=False), "rb"), encoding="utf-8") as text:
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
    target = jailed(workdir, filepath)
    name = _shown(workdir, target)
    if target.is_dir():
        return f"Error: {name} is a folder; give a file path"
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = open_jailed(workdir, target, write=True)
    os.ftruncate(fd, 0)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(content)
    lines = content.count("\n") + 1
    return f"Wrote {_number(len(content))} characters ({_number(lines)} lines) to {name}"


def _entry(path: Path, label: str) -> str:
    if path.is_symlink():
        return f"{label} (symlink)"
    if path.is_dir():
        return f"{label}/"
    return f"{label} ({_size(path.stat().st_size)})"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KB" if n < 1024**2 else f"{n / 1024**2:.1f} MB"


def _walk(base: Path, recursive: bool) -> tuple[list[Path], bool]:
    """Entries under `base` in a stable order, stopping at MAX_WALK; symlinked folders are not entered."""
    if not recursive:
        entries = sorted(base.iterdir(), key=lambda p: p.name)
        return entries[:MAX_WALK], len(entries) > MAX_WALK
    found: list[Path] = []
    for folder, dirs, files in os.walk(base):
        dirs.sort()
        for name in sorted(dirs) + sorted(files):
            found.append(Path(folder, name))
            if len(found) >= MAX_WALK:
                return found, True
    return found, False


def _summary(base: Path, entries: list[Path], capped: bool) -> str:
    files = [p for p in entries if not p.is_dir() or p.is_symlink()]
    folders = len(entries) - len(files)
    by_ext = Counter(p.suffix.lower() or "(no extension)" for p in files)
    top = Counter(p.relative_to(base).parts[0] for p in entries if len(p.relative_to(base).parts) > 1)
    count = f"at least {_number(len(entries))}" if capped else _number(len(entries))
    lines = [f"{count} entries: {_number(len(files))} files, {_number(folders)} folders",
             "by extension: " + ", ".join(f"{ext} {_number(n)}" for ext, n in by_ext.most_common(15))]
    if top:
        per_folder = ", ".join(f"{d}/ {_number(n)}" for d, n in top.most_common(15))
        lines.append(f"entries per top-level folder: {per_folder}")
    return "\n".join(lines)


def _list(workdir: Path, dirpath: str, recursive: object) -> str:
    base = jailed(workdir, dirpath)
    name = _shown(workdir, base)
    if not base.exists():
        return f"Error: {name} does not exist"
    if not base.is_dir():
        return f"Error: {name} is a file; use read_file to read it"
    entries, capped = _walk(base, bool(recursive))
    if not entries:
        return f"{name} is empty"
    lines = [_entry(p, str(p.relative_to(base))) for p in entries[:MAX_ENTRIES]]
    if len(entries) <= MAX_ENTRIES:
        return "\n".join(lines)
    rest = len(entries) - MAX_ENTRIES
    return (f"{_summary(base, entries, capped)}\n\nfirst {MAX_ENTRIES}:\n" + "\n".join(lines)
            + f"\n… and {_number(rest)}{'+' if capped else ''} more; list a subfolder to see them")


async def in_thread(func: Callable[..., str], *args: object) -> str:
    """Run blocking file work off the event loop; refusals and OS errors become the tool's answer."""
    try:
        return await asyncio.to_thread(func, *args)
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
