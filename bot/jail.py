"""Opening paths inside a chat folder without following any link a sandboxed command may have planted.

An approved command can write anything in its chat folder, symlinks included, and a symlink's target
text may name any path on the machine. The bot runs outside the sandbox, so every path it opens there
is walked one component at a time from a descriptor of the folder: each folder with O_DIRECTORY |
O_NOFOLLOW relative to the one before, the file with O_NOFOLLOW, then fstat-checked (a regular file
with a single link). openat2's RESOLVE_BENEATH would do this in one call; the stdlib has no binding.

Hard links: inside the sandbox link(2) cannot join the chat folder to another mount (EXDEV), but a link
made outside it can, and no name of a shared inode is "the real one" — so a file with st_nlink > 1 is
refused. Every file the bot itself writes here has exactly one link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import stat
from collections.abc import Iterator
from enum import Enum
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LINKED = (errno.ELOOP, errno.ENOTDIR)  # a symlink (or a file) where a folder or file should be


class Why(Enum):
    OUTSIDE = "outside"  # absolute, climbs above the folder, or goes through a symlink
    SPECIAL = "special"  # a pipe, socket, device or folder where a regular file was expected
    SHARED = "shared"  # the file has other hard links
    TOO_BIG = "too_big"  # larger than the caller reads


class Jailed(Exception):
    """A path in a chat folder that is not opened; `why` says which rule, `path` is as the caller gave it."""

    def __init__(self, why: Why, path: str, size: int = 0) -> None:
        super().__init__(f"{path}: {why.value}")
        self.why, self.path, self.size = why, path, size


def parts(path: str) -> list[str]:
    """`path` as components below the folder ('' and '.' are the folder itself); Jailed if it leads out."""
    if not isinstance(path, str) or "\x00" in path:
        raise Jailed(Why.OUTSIDE, str(path))
    normal = posixpath.normpath(path) if path else "."
    if normal.startswith("/") or normal == ".." or normal.startswith("../"):
        raise Jailed(Why.OUTSIDE, path)
    return [] if normal == "." else normal.split("/")


def open_root(root: Path) -> int:
    """A descriptor of the chat folder itself (made on first use). Its parents are the operator's, not the sandbox's."""
    os.makedirs(root, mode=0o700, exist_ok=True)
    return os.open(root, _DIR)


def open_dir(root: Path, path: str, create: bool = False) -> int:
    """A descriptor of the folder `path` below `root`, every step a real folder; `create` makes missing ones."""
    fd = open_root(root)
    try:
        for name in parts(path):
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o700, dir_fd=fd)
            try:
                child = os.open(name, _DIR, dir_fd=fd)
            except OSError as e:
                if e.errno in _LINKED:
                    raise Jailed(Why.OUTSIDE, path) from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def directory(root: Path, path: str, create: bool = False) -> Iterator[int]:
    fd = open_dir(root, path, create)
    try:
        yield fd
    finally:
        os.close(fd)


def open_file(root: Path, path: str, write: bool = False, max_bytes: int | None = None) -> int:
    """A descriptor of the regular, singly linked file `path` (created when writing); Jailed otherwise."""
    *folders, name = parts(path) or [""]
    if not name:
        raise Jailed(Why.SPECIAL, path)
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_WRONLY | os.O_CREAT if write else os.O_RDONLY)
    with directory(root, "/".join(folders) or ".", create=write) as parent:
        try:
            fd = os.open(name, flags, 0o600, dir_fd=parent)
        except OSError as e:
            if e.errno in _LINKED:
                raise Jailed(Why.OUTSIDE, path) from None
            if e.errno in (errno.EISDIR, errno.ENXIO):  # a folder, or a FIFO with nobody reading
                raise Jailed(Why.SPECIAL, path) from None
            raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Jailed(Why.SPECIAL, path)
        if info.st_nlink > 1:
            raise Jailed(Why.SHARED, path)
        if max_bytes is not None and info.st_size > max_bytes:
            raise Jailed(Why.TOO_BIG, path, info.st_size)
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_bytes(root: Path, path: str, max_bytes: int) -> bytes:
    with os.fdopen(open_file(root, path, max_bytes=max_bytes), "rb") as handle:
        return handle.read(max_bytes + 1)[:max_bytes]


def kind(root: Path, path: str) -> str | None:
    """'dir', 'file', 'link', 'other', or None when nothing is there — without following any link."""
    *folders, name = parts(path) or ["."]
    try:
        with directory(root, "/".join(folders) or ".") as parent:
            mode = os.lstat(name, dir_fd=parent).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return "link"
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def unlink(root: Path, path: str) -> bool:
    """Remove one name below `root` (a symlink goes, its target stays); False when it was not a file."""
    try:
        *folders, name = parts(path) or [""]  # the folder itself: "" is no name (FileNotFoundError)
        with directory(root, "/".join(folders) or ".") as parent:
            if stat.S_ISDIR(os.lstat(name, dir_fd=parent).st_mode):
                return False
            os.unlink(name, dir_fd=parent)
    except (FileNotFoundError, Jailed):
        return False
    return True
