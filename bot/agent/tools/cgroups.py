"""One cgroup per approved command, so memory and process count bound its whole process tree.

`prlimit` limits are per process: a command may start several processes of the allowed size, and the
process limit does not apply to root at all. A cgroup counts the whole tree. cgroup v2 is used when the
bot's cgroup (or its parent) already delegates the memory and pids controllers to its children (systemd
`Delegate=yes`); on hybrid hosts, the v1 memory and pids hierarchies when the bot may write them.
Elsewhere `problem()` says why not: doctor shows it, and a bot running as root gets no shell (sandbox.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("memory", "pids")
# (file, what it is set to) in each of a command's cgroup folders, where the file exists (v1 or v2 names)
_SETTINGS = (("memory.max", "memory"), ("memory.swap.max", "0"), ("memory.limit_in_bytes", "memory"),
             ("memory.memsw.limit_in_bytes", "memory"), ("pids.max", "processes"))
# moves itself into each cgroup named before `--`, then becomes the command: nothing forks outside the group
_ENTER = 'while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; done; shift; exec "$@"'


@dataclass(frozen=True)
class Hierarchy:
    version: int
    parents: tuple[Path, ...]  # where a command's group is made: one folder (v2), or the memory and pids ones (v1)


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, file system, options) of every cgroup mount, from /proc/self/mountinfo."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        parts, (fstype, _source, options) = fields.split(), tail.split()[:3]
        if fstype in ("cgroup", "cgroup2"):
            found.append((parts[3], parts[4], fstype, set(options.split(","))))
    return found


def _own() -> dict[str, str]:
    """This process's cgroup per controller ('' is the v2 one), from /proc/self/cgroup."""
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            own[name] = path
    return own


def _folder(root: str, mount: str, path: str) -> Path:
    relative = os.path.relpath(path, root)
    return Path(mount) if relative == "." else Path(mount, relative)


def _v2(mounts: list[tuple[str, str, str, set[str]]], own: dict[str, str]) -> Hierarchy | None:
    for root, mount, fstype, _ in mounts:
        if fstype != "cgroup2" or "" not in own:
            continue
        mine = _folder(root, mount, own[""])
        for parent in (mine, mine.parent):
            with contextlib.suppress(OSError):
                delegated = set((parent / "cgroup.subtree_control").read_text().split())
                if set(CONTROLLERS) <= delegated and os.access(parent, os.W_OK):
                    return Hierarchy(2, (parent,))
    return None


def _v1(mounts: list[tuple[str, str, str, set[str]]], own: dict[str, str]) -> Hierarchy | None:
    parents = []
    for controller in CONTROLLERS:
        found = [_folder(root, mount, own[controller]) for root, mount, fstype, options in mounts
                 if fstype == "cgroup" and controller in options and controller in own]
        if not found or not os.access(found[0], os.W_OK):
            return None
        parents.append(found[0])
    return Hierarchy(1, tuple(parents))


@functools.cache
def hierarchy() -> Hierarchy | None:
    try:
        mounts, own = _mounts(), _own()
    except OSError:
        return None
    return _v2(mounts, own) or _v1(mounts, own)


def problem() -> str | None:
    if hierarchy() is None:
        return ("no cgroup with the memory and pids controllers is writable here (cgroup v2 needs them delegated "
                "to the bot's cgroup, e.g. systemd Delegate=yes), so memory and process limits apply per process")
    return None


def describe() -> str:
    found = hierarchy()
    return "none" if found is None else f"cgroup v{found.version} ({', '.join(map(str, found.parents))})"


class CommandGroup:
    """A command's own cgroup: made before it starts, everything in it killed and the folder removed after."""

    def __init__(self, found: Hierarchy, memory: int, processes: int) -> None:
        name = f"bothub-{os.getpid()}-{secrets.token_hex(4)}"
        self.folders = [parent / name for parent in found.parents]
        values = {"memory": str(memory), "processes": str(processes), "0": "0"}
        applied = set()
        try:
            for folder in self.folders:
                folder.mkdir()
                for file, value in _SETTINGS:
                    if (folder / file).exists():
                        (folder / file).write_text(values[value])
                        applied.add(value)
            if not {"memory", "processes"} <= applied:  # a limit promised is a limit set, or no command runs
                raise OSError(f"no memory or pids limit file in {', '.join(map(str, self.folders))}")
        except OSError:
            self.close()
            raise

    def wrap(self, argv: list[str]) -> list[str]:
        return ["/bin/sh", "-c", _ENTER, "sh", *map(str, self.folders), "--", *argv]

    def close(self) -> None:
        """Kill what is left (a command's tree ends with it) and remove the folders; blocking."""
        for _ in range(50):
            left = [int(pid) for folder in self.folders if (folder / "cgroup.procs").exists()
                    for pid in (folder / "cgroup.procs").read_text().split()]
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if not left:
                break
            time.sleep(0.02)
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.rmdir()


def command_group(memory: int, processes: int) -> CommandGroup | None:
    """A new group with these limits, or None where cgroups are not available (see `problem`); OSError when
    they are but this one could not be made with both limits."""
    found = hierarchy()
    return None if found is None else CommandGroup(found, memory, processes)
