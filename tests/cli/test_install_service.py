"""Friction 4: `bothub install-service` as root into a staging root, then bothub started as the `bothub` user it
made, with the environment systemd would give it: it must read its config, write its data and serve."""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from bot.cli import envfile
from tests.cli.test_starts_anywhere import line_with
from tests.fakes.openai_api import API_KEY, FakeOpenAI

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = Path(f"/usr/bin/python3.{sys.version_info.minor}")  # what a service user can run


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder other users may pass through (pytest's own tmp folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="bothub-service-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def staging_root(base: Path) -> Path:
    root = base / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n", encoding="utf-8")
    (root / "etc" / "group").write_text("root:x:0:\n", encoding="utf-8")
    (root / "etc" / "shadow").write_text("root:*:19000:0:99999:7:::\n", encoding="utf-8")
    (root / "etc" / "gshadow").write_text("root:*::\n", encoding="utf-8")
    shutil.copy("/etc/login.defs", root / "etc" / "login.defs")
    return root


def service_venv(base: Path) -> Path:
    """A venv as `make run` leaves one, on the system Python, seeing this checkout's installed dependencies."""
    assert SYSTEM_PYTHON.exists(), f"the service test runs bothub on {SYSTEM_PYTHON}: apt-get install python3"
    venv = base / "opt" / "bothub" / ".venv"
    subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = venv / "lib" / f"python3.{sys.version_info.minor}" / "site-packages"
    (site / "bothub-deps.pth").write_text(f"{sysconfig.get_paths()['purelib']}\n{REPO}\n", encoding="utf-8")
    for hook in Path(sysconfig.get_paths()["purelib"]).glob("*coverage*.pth"):  # `make test` measures it too,
        shutil.copy(hook, site / f"z-{hook.name}")  # read after bothub-deps.pth, which makes coverage importable
    program = venv / "bin" / "bothub"
    program.write_text(f"#!{venv}/bin/python\nimport sys\nfrom bot.cli.main import main\nsys.exit(main())\n",
                       encoding="utf-8")
    program.chmod(0o755)
    return venv


def mode_and_owner(path: Path) -> tuple[int, int, int]:
    info = path.stat()
    return info.st_mode & 0o777, info.st_uid, info.st_gid


def install_and_check(base: Path) -> tuple[Path, Path, int, int]:
    """`bothub install-service --root`, and every owner and mode it promises: (root, venv, uid, gid)."""
    root, venv = staging_root(base), service_venv(base)
    done = subprocess.run([str(venv / "bin" / "bothub"), "install-service", "--root", str(root)],
                          capture_output=True, text=True, timeout=120, cwd=base)
    assert done.returncode == 0, done.stderr
    assert "systemctl daemon-reload && systemctl enable --now bothub" in done.stdout
    entry = next(line for line in (root / "etc" / "passwd").read_text().splitlines() if line.startswith("bothub:"))
    uid, gid = int(entry.split(":")[2]), int(entry.split(":")[3])
    etc, state = root / "etc" / "bothub", root / "var" / "lib" / "bothub"
    unit = root / "etc" / "systemd" / "system" / "bothub.service"
    assert mode_and_owner(etc) == (0o750, 0, gid)  # the friction: root-only, so bothub could not enter
    assert mode_and_owner(etc / "bothub.yaml") == (0o640, 0, gid)
    assert mode_and_owner(etc / "bothub.env") == (0o600, 0, 0)  # systemd reads it as root
    assert mode_and_owner(state) == (0o750, uid, gid)
    assert mode_and_owner(unit) == (0o644, 0, 0)
    text = unit.read_text(encoding="utf-8")
    assert f"ExecStart={venv}/bin/bothub run" in text and "User=bothub" in text
    verified = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0, verified.stderr
    return root, venv, uid, gid


@pytest.mark.timeout(180)
async def test_the_service_user_reads_its_config_writes_its_data_and_serves(base: Path, fake: FakeOpenAI) -> None:
    root, venv, uid, gid = await asyncio.to_thread(install_and_check, base)
    etc, state = root / "etc" / "bothub", root / "var" / "lib" / "bothub"
    env = {**envfile.parse(etc / "bothub.env"),  # EnvironmentFile=, then the unit's Environment= lines
           "PATH": "/usr/bin:/bin", "BOTHUB_CONFIG": str(etc / "bothub.yaml"), "BOTHUB_DATA_DIR": str(state),
           "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": API_KEY, "BOTHUB_PORT": "0"}
    as_bothub = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]  # as User=/Group=
    proc = await asyncio.create_subprocess_exec(
        *as_bothub, str(venv / "bin" / "bothub"), "run", cwd=state, env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        where = await line_with(proc, "serving the web chat at")
        base_url = where.split(" at ", 1)[1].split("/webchat", 1)[0]
        async with aiohttp.ClientSession() as http, http.get(f"{base_url}/healthz") as health:
            assert health.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()
    assert mode_and_owner(state / "bothub.sqlite3")[1:] == (uid, gid)


def test_a_checkout_other_users_cannot_reach_is_refused_with_where_to_put_it(base: Path) -> None:
    root, private = staging_root(base), base / "private"
    venv = service_venv(private)
    private.chmod(0o700)  # as a checkout in a home folder: the service user could never start it
    done = subprocess.run([str(venv / "bin" / "bothub"), "install-service", "--root", str(root)],
                          capture_output=True, text=True, timeout=60, cwd=base)
    assert done.returncode == 1
    assert done.stderr == (f"bothub: the bothub user could not reach {venv}/bin/bothub: {private} is closed to "
                           "other users or hidden from services (ProtectHome). Put the checkout where services "
                           "can read it, e.g. /opt/bothub, and run make run there once\n")
    assert not (root / "etc" / "bothub").exists() and "bothub:" not in (root / "etc" / "passwd").read_text()
