"""A throwaway PostgreSQL server for the tests and benchmarks: initdb in a temporary folder, trust auth,
127.0.0.1 on a free port, no fsync. The server refuses to run as root, so under root it runs as the
`postgres` user that Debian's package creates (`.ci/run` installs it)."""

from __future__ import annotations

import glob
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import asyncpg

SUPERUSER = "bothub"


def _bin_dir() -> Path:
    found = shutil.which("pg_ctl")
    candidates = [str(Path(found).resolve().parent)] if found else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if (Path(folder) / "postgres").exists():
            return Path(folder)
    raise RuntimeError("PostgreSQL server binaries not found: install Debian's postgresql package")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    def __init__(self, settings: tuple[str, ...] = ()) -> None:
        self.settings = settings  # extra server settings, e.g. "shared_preload_libraries=pg_stat_statements"
        self.bin = _bin_dir()
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="bothub-pg-"))
        self.data = self.root / "data"
        self._user = "postgres" if os.geteuid() == 0 else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._databases = 0

    def start(self) -> None:
        if self._user is not None:
            entry = pwd.getpwnam(self._user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        subprocess.run([str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                        "--encoding=UTF8", "--locale=C.UTF-8"],
                       check=True, capture_output=True, user=self._user)
        with (self.root / "server.log").open("wb") as log:
            self._proc = subprocess.Popen(
                [str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port),
                 "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "fsync=off",
                 "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200",
                 *(arg for setting in self.settings for arg in ("-c", setting))],
                stdout=log, stderr=subprocess.STDOUT, user=self._user, start_new_session=True)
        deadline = time.monotonic() + 30
        ready = [str(self.bin / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER]
        while subprocess.run(ready, check=False).returncode != 0:
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not start: {(self.root / 'server.log').read_text()[-2000:]}")
            time.sleep(0.05)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    async def new_database(self) -> str:
        """A fresh, empty database; returns its URL."""
        self._databases += 1
        name = f"t{os.getpid()}_{self._databases}"
        conn = await asyncpg.connect(self.url())
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()
        return self.url(name)

    async def drop_database(self, url: str) -> None:
        """Remove a database new_database made (connections still open are ended), so the cluster stays small
        and removing it at the end of the run stays quick."""
        conn = await asyncpg.connect(self.url())
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')
        finally:
            await conn.close()

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGINT)  # fast shutdown: disconnect clients, stop
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        # A database per test makes the folder hundreds of MB: it is deleted by an orphaned `rm`, so the last
        # test's teardown does not pay for it against its timeout on a loaded machine.
        subprocess.run(["sh", "-c", f"rm -rf {shlex.quote(str(self.root))} >/dev/null 2>&1 &"], check=False,
                       stdin=subprocess.DEVNULL)
