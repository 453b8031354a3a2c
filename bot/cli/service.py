"""`bothub install-service`: the systemd unit, its config, the data directory and the service user, with
ownership and modes the `bothub` user can work with. Run as root with the checkout's venv.

`--root DIR` writes under DIR (a staging root: useradd --root edits DIR/etc/passwd), for images and for the test
that then runs bothub as that user. The unit names this venv as it is. What it makes:
  /etc/systemd/system/bothub.service  root 0644        deploy/bothub.service, ExecStart this venv's bothub
  /etc/bothub/                        root:bothub 0750
  /etc/bothub/bothub.yaml             root:bothub 0640 config/bothub.example.yaml (the web server is on)
  /etc/bothub/bothub.env              root 0600        .env.example: systemd reads it as root, then drops to bothub
  /var/lib/bothub/                    bothub 0750      the database, chat folders and workspace
A config or env file already there is kept; the unit is written again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from bot.i18n import t

USER = "bothub"
CHECKOUT = Path(__file__).resolve().parents[2]
TEMPLATE_VENV = "/opt/bothub/.venv"  # how deploy/bothub.service names the venv
HIDDEN = (Path("/home"), Path("/root"), Path("/run/user"))  # ProtectHome=yes: the service cannot see these


class ServiceError(Exception):
    """A step that cannot be done, worded for the person installing."""


def install(root: Path, lang: str) -> int:
    try:
        written = _install(root, Path(sys.prefix), lang)
    except ServiceError as e:
        print(f"bothub: {e}", file=sys.stderr)
        return 1
    for path in written:
        print(t(lang, "service_wrote", path=path))
    print(t(lang, "service_next"))
    return 0


def _install(root: Path, venv: Path, lang: str) -> list[Path]:
    if os.geteuid() != 0:
        raise ServiceError(t(lang, "service_not_root"))
    program = venv / "bin" / "bothub"
    for needed in (program, Path(os.path.realpath(venv / "bin" / "python")), CHECKOUT / "bot"):
        if (blocked := _unreachable(needed)) is not None:
            raise ServiceError(t(lang, "service_unreachable", path=needed, blocked=blocked))
    uid, gid = _service_user(root)
    etc, state = root / "etc" / "bothub", root / "var" / "lib" / "bothub"
    unit = root / "etc" / "systemd" / "system" / "bothub.service"
    _directory(etc, 0, gid, 0o750)
    _directory(state, uid, gid, 0o750)
    _directory(unit.parent, 0, 0, 0o755)
    text = (CHECKOUT / "deploy" / "bothub.service").read_text(encoding="utf-8")
    _write(unit, text.replace(TEMPLATE_VENV, str(venv)), 0, 0, 0o644)
    written = [unit]
    for name, source, owner, mode in (("bothub.yaml", "config/bothub.example.yaml", (0, gid), 0o640),
                                      ("bothub.env", ".env.example", (0, 0), 0o600)):
        if not (etc / name).exists():
            _write(etc / name, (CHECKOUT / source).read_text(encoding="utf-8"), *owner, mode)
            written.append(etc / name)
    return written


def _unreachable(path: Path) -> Path | None:
    """The first directory on the way to `path` that another user cannot pass (or ProtectHome hides)."""
    for hidden in HIDDEN:
        if path.is_relative_to(hidden):
            return hidden
    for folder in reversed(path.parents):
        if not folder.stat().st_mode & 0o001:
            return folder
    return None


def _service_user(root: Path) -> tuple[int, int]:
    """The `bothub` system user and group of `root`'s passwd, created when missing: (uid, gid)."""
    if (found := _passwd_entry(root)) is None:
        useradd = shutil.which("useradd")
        if useradd is None:
            raise ServiceError("useradd is not installed (Debian: apt-get install passwd)")
        subprocess.run([useradd, "--root", str(root.resolve()), "--system", "--user-group", "--no-create-home",
                        "--home-dir", "/var/lib/bothub", "--shell", "/usr/sbin/nologin", USER],
                       check=True, timeout=60)
        found = _passwd_entry(root)
    assert found is not None, "useradd succeeded but wrote no entry"
    return found


def _passwd_entry(root: Path) -> tuple[int, int] | None:
    passwd = root / "etc" / "passwd"
    lines = passwd.read_text(encoding="utf-8").splitlines() if passwd.exists() else []
    for fields in (line.split(":") for line in lines):
        if fields[0] == USER and len(fields) > 3:
            return int(fields[2]), int(fields[3])
    return None


def _directory(path: Path, uid: int, gid: int, mode: int) -> None:
    """`path` with its owner and mode; folders made on the way (/var/lib in a bare root) are 0755 as usual,
    not bothub's private 0700 (its umask), or the service user could not pass them."""
    for folder in [*reversed(path.parents), path]:
        if not folder.exists():
            folder.mkdir()
            folder.chmod(0o755)
    os.chown(path, uid, gid)
    path.chmod(mode)


def _write(path: Path, text: str, uid: int, gid: int, mode: int) -> None:
    """Written with its final owner and mode before it holds anything."""
    path.touch(mode=0o600)
    os.chown(path, uid, gid)
    path.chmod(mode)
    path.write_text(text, encoding="utf-8")
