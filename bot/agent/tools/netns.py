"""Puts the egress proxy's listening socket inside a sandbox's own network namespace, before the command runs.

`bwrap --unshare-net` leaves a command nothing but its own loopback. bwrap reports its child's PID on
`--info-fd` and waits on `--block-fd` before running the command; meanwhile a short helper process joins
that network namespace (as an ordinary user, first the user namespace owning it, which the bot's own bwrap
made) and binds 127.0.0.1:PROXY_PORT there, handing the socket back over a socket pair. The bot serves the
proxy (egress.py) on it from outside: nothing extra runs in the sandbox, and nothing else leads out.
Chosen over slirp4netns and pasta, which NAT to the host's whole network (its private addresses included)
and whose traffic could only be filtered with nftables inside the namespace, refused on such hosts.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import sys

PROXY_PORT = 3128
PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
STEP_TIMEOUT = 10.0  # seconds for bwrap to report, and for the helper
# argv: child PID, port, the socket-pair end to hand the listening socket back on. setns(2) through ctypes:
# os.setns is Python 3.12+. 0x40000000 CLONE_NEWNET, 0x10000000 CLONE_NEWUSER, 0xb701 NS_GET_USERNS, 15 IP_FREEBIND
# (bwrap may raise loopback only after reporting; the command starts after we answer, when it is up).
_HELPER = r"""
import ctypes, fcntl, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
net = os.open(f"/proc/{sys.argv[1]}/ns/net", os.O_RDONLY)
if libc.setns(net, 0x40000000) != 0:
    if libc.setns(fcntl.ioctl(net, 0xb701), 0x10000000) != 0 or libc.setns(net, 0x40000000) != 0:
        sys.exit("setns: " + os.strerror(ctypes.get_errno()))
listener = socket.socket()
listener.setsockopt(socket.SOL_IP, 15, 1)
listener.bind(("127.0.0.1", int(sys.argv[2])))
listener.listen(64)
socket.send_fds(socket.socket(fileno=int(sys.argv[3])), [b"1"], [listener.fileno()])
"""


class Unavailable(Exception):
    """The sandbox's network could not be set up; the command must not run."""


class Launch:
    """The two pipes one sandboxed command's bwrap is given: it reports on one and waits on the other."""

    def __init__(self) -> None:
        self._info_read, self._info_write = os.pipe()
        self._block_read, self._block_write = os.pipe()

    def bwrap_args(self) -> list[str]:
        return ["--info-fd", str(self._info_write), "--block-fd", str(self._block_read)]

    def child_fds(self) -> tuple[int, int]:
        return self._info_write, self._block_read

    def listener(self) -> socket.socket:
        """After bwrap started: the listening socket inside its network namespace (blocking, bounded)."""
        os.close(self._info_write)
        os.close(self._block_read)
        self._info_write = self._block_read = -1
        pid = _child_pid(self._info_read)
        ours, theirs = socket.socketpair()
        with ours, theirs:
            try:
                done = subprocess.run([sys.executable, "-I", "-S", "-c", _HELPER, str(pid), str(PROXY_PORT),
                                       str(theirs.fileno())], pass_fds=(theirs.fileno(),), capture_output=True,
                                      timeout=STEP_TIMEOUT, check=False, env={})  # it needs no environment
            except (OSError, subprocess.TimeoutExpired) as e:
                raise Unavailable(f"the network helper did not run: {e}") from e
            if done.returncode != 0:
                detail = done.stderr.decode(errors="replace").strip().splitlines()
                raise Unavailable(detail[-1] if detail else f"the network helper failed ({done.returncode})")
            _, fds, _, _ = socket.recv_fds(ours, 1, 1)
        if not fds:
            raise Unavailable("the network helper handed back no socket")
        return socket.socket(fileno=fds[0])

    def release(self) -> None:
        """Lets the command start. Only after the listener is served: bwrap also starts on end of file."""
        os.write(self._block_write, b"1")

    def close(self) -> None:
        """Call only once the command has ended or was killed (closing the block pipe would release it)."""
        for fd in (self._info_read, self._info_write, self._block_read, self._block_write):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._info_read = self._info_write = self._block_read = self._block_write = -1


def _child_pid(info: int) -> int:
    """bwrap's JSON report on --info-fd, read to its end (bwrap closes it after writing)."""
    data = b""
    while True:
        ready, _, _ = select.select([info], [], [], STEP_TIMEOUT)
        if not ready:
            raise Unavailable("bwrap did not report its sandbox in time")
        if not (chunk := os.read(info, 4096)):
            break
        data += chunk
    try:
        pid = json.loads(data)["child-pid"]
    except (ValueError, KeyError, TypeError) as e:
        raise Unavailable("bwrap ended before reporting its sandbox") from e
    if not isinstance(pid, int):
        raise Unavailable("bwrap reported no sandbox PID")
    return pid
