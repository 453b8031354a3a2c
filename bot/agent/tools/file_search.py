"""`file_search`: find files in the chat's own folder by name (a glob) and by the text inside them.

So the agent can find what a user uploaded weeks ago without listing every folder. The walk is the jail's
(bot/jail.py): it starts from a descriptor of the chat folder, never enters a symlink, and opens each file with
O_NOFOLLOW relative to its folder, skipping anything that is not a regular, singly linked file. Every bound is
fixed — files looked at, bytes read per file and in all, matches returned — so a folder of any size costs the
same at most. Runs in a thread.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bot import jail
from bot.agent.tools.files import OUTSIDE, in_thread, kind, shown
from bot.agent.tools.registry import ToolContext, ToolRegistry

MAX_FILES = 5_000  # entries looked at before the search stops and says so
MAX_FILE_BYTES = 1024 * 1024  # text read from one file
MAX_TOTAL_BYTES = 32 * 1024 * 1024  # text read in one search
MAX_MATCHES = 50  # lines (or names) returned
MAX_LINE = 240  # characters of a matching line shown
_BINARY_PROBE = 8192  # a NUL byte in the first bytes means the file is not text


@dataclass
class _Search:
    """One search's running state: what was found and how much of each bound is spent."""

    glob: str
    text: str
    found: list[str] = field(default_factory=list)
    looked_at: int = 0
    read: int = 0
    stopped: str = ""

    def wants(self, rel: PurePosixPath) -> bool:
        target = str(rel) if "/" in self.glob else rel.name
        return not self.glob or fnmatch.fnmatch(target.lower(), self.glob.lower())

    def add(self, line: str) -> bool:
        """Record a hit; False once the result is full."""
        self.found.append(line)
        if len(self.found) >= MAX_MATCHES:
            self.stopped = f"first {MAX_MATCHES} matches shown; narrow the search to see others"
            return False
        return True


def _text_of(folder_fd: int, name: str, budget: int) -> str | None:
    """The start of a regular, singly linked text file, read without following a link; None otherwise."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            return None
        data = handle.read(min(MAX_FILE_BYTES, budget))
    if b"\x00" in data[:_BINARY_PROBE]:
        return None
    return data.decode("utf-8", errors="replace")


def _grep(search: _Search, rel: PurePosixPath, body: str) -> bool:
    needle = search.text.lower()
    for number, line in enumerate(body.splitlines(), 1):
        if needle in line.lower():
            cut = line.strip()
            cut = cut if len(cut) <= MAX_LINE else cut[:MAX_LINE] + "…"
            if not search.add(f"{rel}:{number}: {cut}"):
                return False
    return True


def _visit(search: _Search, folder_fd: int, rel: PurePosixPath) -> bool:
    """Look at one file; False once a bound says stop."""
    search.looked_at += 1
    if search.looked_at > MAX_FILES:
        search.stopped = f"stopped after {MAX_FILES} files; search a subfolder to go further"
        return False
    if not search.wants(rel):
        return True
    if not search.text:
        return search.add(str(rel))
    if search.read >= MAX_TOTAL_BYTES:
        search.stopped = f"stopped after reading {MAX_TOTAL_BYTES // 1024 // 1024} MB; search a subfolder"
        return False
    body = _text_of(folder_fd, rel.name, MAX_TOTAL_BYTES - search.read)
    if body is None:
        return True
    search.read += len(body)
    return _grep(search, rel, body)


def _search(workdir: Path, glob: str, text: str, dirpath: str) -> str:
    if not glob and not text:
        return "Error: give a name pattern (glob), some text to look for, or both"
    found = kind(workdir, dirpath)
    if found is None:
        return f"Error: {shown(dirpath)} does not exist"
    if found != "dir":
        return OUTSIDE if found == "link" else f"Error: {shown(dirpath)} is not a folder"
    search, base = _Search(glob.strip(), text.strip()), PurePosixPath(*jail.parts(dirpath))
    with jail.directory(workdir, dirpath) as root:
        for folder, dirs, files, fd in os.fwalk(".", dir_fd=root):  # symlinked folders are listed, not entered
            dirs.sort()
            here = base / PurePosixPath(folder)
            if not all(_visit(search, fd, here / name) for name in sorted(files)):
                break
    if not search.found:
        return f"No match in {shown(dirpath)} ({search.looked_at} files looked at)."
    tail = f"\n… {search.stopped}" if search.stopped else ""
    return "\n".join(search.found) + tail


async def file_search(ctx: ToolContext, glob: str = "", text: str = "", dirpath: str = ".") -> str:
    if not all(isinstance(v, str) for v in (glob, text, dirpath)):
        return "Error: glob, text and dirpath must be strings"
    return await in_thread(_search, ctx.workdir, glob, text, dirpath)


def register(registry: ToolRegistry) -> None:
    registry.register(
        "file_search",
        "Find files in this chat's folder by name and/or by the text inside them (case-insensitive). "
        f"Returns 'path' or 'path:line: text', at most {MAX_MATCHES} results.",
        {"type": "object", "properties": {
            "glob": {"type": "string", "description": "Name pattern, e.g. '*.pdf' or 'uploads/2026-*/*.txt'"},
            "text": {"type": "string", "description": "Text to find inside text files"},
            "dirpath": {"type": "string", "description": "Folder to search, relative to the chat's (default '.')"},
        }},
        file_search,
    )
