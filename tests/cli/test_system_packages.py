"""Item 10: `make test` on a fresh machine checks the system packages the tests drive before anything else."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / ".ci" / "system-packages"


def test_with_everything_installed_it_says_nothing() -> None:
    done = subprocess.run([str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_missing_packages_stop_it_at_once_with_the_command_to_run(tmp_path: Path) -> None:
    """A machine without them and without apt-get to install them: one line naming the command."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("id", "bash"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    env = {**os.environ, "PATH": str(bin_dir)}
    done = subprocess.run([str(bin_dir / "bash"), str(SCRIPT)], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("make test needs system packages that are missing; run: sudo apt-get install -y "
                           "bubblewrap util-linux systemd passwd chromium ffmpeg\n")


def test_make_test_and_ci_run_share_it() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "test: system-packages lint" in makefile and "\t.ci/system-packages" in makefile
    assert (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().endswith("make test")
