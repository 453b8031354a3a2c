"""A hung test ends within its timeout, however it hangs. pytest-timeout's default (SIGALRM) never fired for a
test awaiting an approval that never came: the event loop sits in its C poll, no Python code runs to raise
the timeout, and CI would wait out its 90 minutes; and it stands down once a test has failed, so a failed test
whose teardown hangs hung the run too (tests/conftest.py's watchdog). The suite's own settings (pyproject.toml,
`make test`'s workers) are held here against a deliberately hung run in a child pytest."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HUNG = '''
import asyncio

import pytest


@pytest.fixture
async def stuck_teardown():
    yield
    await asyncio.get_running_loop().create_future()  # a stop that waits on something that is gone


@pytest.mark.timeout(2)
async def test_waits_for_an_approval_that_never_comes():
    await asyncio.get_running_loop().create_future()


@pytest.mark.timeout(2)
async def test_hangs_in_its_teardown(stuck_teardown):
    pass


@pytest.mark.timeout(2)
async def test_fails_then_hangs_in_its_teardown(stuck_teardown):
    assert False, "pytest-timeout cancels its timer here, at the failure"


async def test_beside_them():
    await asyncio.sleep(0)
'''


@pytest.mark.timeout(180)
def test_a_hung_test_fails_within_its_timeout_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("from tests.conftest import platform_budgets, pytest_asyncio_loop_factories, "
                                          "pytest_runtest_protocol  # noqa: F401  the suite's loop and watchdog\n")
    (tmp_path / "test_hung.py").write_text(HUNG)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE", "COVERAGE", "PYTEST_"))}
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir",
                              str(ROOT), "-p", "no:cacheprovider", "--no-cov", "-q", "-rfp", "-n", "2",
                              str(tmp_path / "test_hung.py")],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        stdout, stderr = child.communicate(timeout=150)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)  # with the workers, hung or not
    run = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
    took = time.monotonic() - started
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    failed = re.findall(r"^FAILED \S*::(\w+)", run.stdout, re.MULTILINE)
    assert sorted(set(failed)) == ["test_fails_then_hangs_in_its_teardown", "test_hangs_in_its_teardown",
                                   "test_waits_for_an_approval_that_never_comes"], out
    assert re.search(r"^PASSED \S*::test_beside_them", run.stdout, re.MULTILINE), out
    # each hung test's worker ended, and a fresh one took over
    assert len(re.findall(r"^worker '\w+' crashed while running", run.stdout, re.MULTILINE)) == 3, out
    assert took < 100, f"the run took {took:.0f} s for 2 s timeouts (and the watchdog's grace)"
