"""Runs an approved shell command inside bubblewrap, so it sees only its own chat's folder.

Blocking words cannot stop `cat ../../bothub.sqlite3` or reading `/proc/<bot>/environ`; isolation
can. Each command gets fresh mount, PID, IPC and user namespaces: the chat's folder is bound
read-write as working folder and `$HOME`, system folders read-only, `/tmp` private, `/proc` its own,
its own network namespace (no network, or with `tools.shell_network` only an egress proxy to public
addresses: netns.py, egress.py), and CPU, memory and file-size limits per process; memory and process
count for the whole command in its own cgroup where the host allows (cgroups.py). Without a working `bwrap` the
shell tool is not offered at all — never a silent fallback to an unsandboxed shell.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bot.agent.tools import cgroups, netns

INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
_READ_ONLY = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives", "/etc/ssl",
              "/etc/ca-certificates", "/etc/ld.so.cache", "/etc/localtime")
_NETWORK_FILES = ("/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf")  # no resolv.conf: the proxy resolves names
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_PATH = "/usr/local/bin:/usr/bin:/bin"
_NOBODY = 65534
LAUNCH_ENV = {"PATH": _PATH}  # bwrap itself is PID 1 in the sandbox: its /proc/1/environ must hold nothing


@dataclass(frozen=True)
class Limits:
    """CPU seconds, address space and largest file written per process; memory and processes also for the
    command's whole tree where it gets a cgroup (cgroups.py)."""

    cpu_seconds: int = 60
    memory_bytes: int = 1024 * 1024 * 1024
    file_bytes: int = 100 * 1024 * 1024
    processes: int = 256


DEFAULT_LIMITS = Limits()


def command_line(command: str, workdir: Path, launch: netns.Launch | None = None, limits: Limits = DEFAULT_LIMITS,
                 bwrap: str = "bwrap") -> list[str]:
    """argv that runs `command` with bash inside the sandbox, limits applied by `prlimit` around it; with a
    `launch`, bwrap waits for the egress proxy (netns.py) and the command is told to use it."""
    folder = str(workdir.resolve())
    argv = [
        "prlimit", f"--cpu={limits.cpu_seconds}", f"--as={limits.memory_bytes}", f"--fsize={limits.file_bytes}",
        f"--nproc={limits.processes}", "--core=0", "--",
        bwrap, "--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc",
        "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL", "--uid", str(_NOBODY), "--gid", str(_NOBODY),
        "--hostname", "sandbox", "--unshare-net",
    ]
    if launch is not None:
        argv += launch.bwrap_args()
    for path in (*_READ_ONLY, *(_NETWORK_FILES if launch else ())):
        if Path(path).is_symlink():
            argv += ["--symlink", str(Path(path).readlink()), path]
        elif Path(path).exists():
            argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", folder, folder, "--remount-ro", "/",
             "--chdir", folder,
             "--clearenv", "--setenv", "PATH", _PATH, "--setenv", "HOME", folder, "--setenv", "LANG", "C.UTF-8",
             "--setenv", "TERM", "dumb", "--setenv", "TMPDIR", "/tmp"]
    for name in _PROXY_VARIABLES if launch else ():  # after --clearenv, which bwrap applies where it stands
        argv += ["--setenv", name, netns.PROXY_URL]
    argv += ["--", "/bin/bash", "--noprofile", "--norc", "-c", command]
    return argv


@functools.cache
def problem(bwrap: str = "bwrap") -> str | None:
    """Why the sandbox cannot run here (None when it works): `bwrap` missing, or namespaces refused."""
    if shutil.which(bwrap) is None:
        return f"`{bwrap}` (bubblewrap) is not installed: {INSTALL_HINT}"
    if shutil.which("prlimit") is None:
        return "`prlimit` (util-linux) is not installed"
    try:
        with tempfile.TemporaryDirectory() as folder:
            probe = command_line("true", Path(folder), bwrap=bwrap)
            done = subprocess.run(probe, capture_output=True, timeout=10, check=False, env=LAUNCH_ENV)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"`{bwrap}` does not start: {e}"
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        return (f"`{bwrap}` cannot create its namespaces here ({detail[-1] if detail else done.returncode}); "
                "unprivileged user namespaces must be allowed")
    if os.geteuid() == 0 and (why := cgroups.problem()):  # root ignores the per-process process limit
        return f"the bot runs as root and {why}; run it as an ordinary user, or give it a delegated cgroup"
    return None


@functools.cache
def network_problem() -> str | None:
    """Why `tools.shell_network` cannot work here (None when it does): a real sandbox connects to the proxy's
    socket made in its namespace (netns.py)."""
    launch = netns.Launch()
    try:
        with tempfile.TemporaryDirectory() as folder:
            probe = command_line(f"exec 3<>/dev/tcp/127.0.0.1/{netns.PROXY_PORT}", Path(folder), launch)
            proc = subprocess.Popen(probe, env=LAUNCH_ENV, pass_fds=launch.child_fds(), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                with launch.listener() as listener:
                    listener.settimeout(netns.STEP_TIMEOUT)
                    launch.release()
                    listener.accept()[0].close()
            except (netns.Unavailable, OSError) as e:
                return f"the sandbox's network cannot be set up here: {e}"
            finally:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(netns.STEP_TIMEOUT)
                proc.kill()
                proc.wait()
    except OSError as e:
        return f"the sandbox's network cannot be set up here: {e}"
    finally:
        launch.close()
    return None
