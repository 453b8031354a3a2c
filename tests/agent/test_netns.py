"""The sandbox network's set-up when bwrap's report is not what it should be: each case is Unavailable (the
command does not run), never a hang or a socket handed out. bwrap's side of the pipes is played by the test."""

from __future__ import annotations

import os

import pytest

from bot.agent.tools import netns


def reported(report: bytes) -> netns.Launch:
    """A launch whose "bwrap" wrote `report` on its info fd."""
    launch = netns.Launch()
    os.write(launch.child_fds()[0], report)
    return launch


@pytest.mark.parametrize(("report", "problem"), [
    (b"", "bwrap ended before reporting its sandbox"),
    (b"{not json", "bwrap ended before reporting its sandbox"),
    (b'{"cgroup-namespace": 1}', "bwrap ended before reporting its sandbox"),
    (b'{"child-pid": "12"}', "bwrap reported no sandbox PID"),
])
def test_a_report_without_a_sandbox_pid_is_unavailable(report: bytes, problem: str) -> None:
    launch = reported(report)
    try:
        with pytest.raises(netns.Unavailable, match=problem):
            launch.listener()
    finally:
        launch.close()
        launch.close()  # twice is harmless: every fd is closed once


def test_a_sandbox_that_is_gone_is_unavailable_with_the_helpers_reason() -> None:
    launch = reported(b'{"child-pid": 4194301}')  # above any PID this machine hands out
    try:
        with pytest.raises(netns.Unavailable, match="No such file or directory"):
            launch.listener()
    finally:
        launch.close()


def test_a_bwrap_that_never_reports_is_given_up_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(netns, "STEP_TIMEOUT", 0.1)
    launch = reported(b'{"child')
    still_writing = os.dup(launch.child_fds()[0])  # "bwrap" holds its end open and says no more
    try:
        with pytest.raises(netns.Unavailable, match="did not report its sandbox in time"):
            launch.listener()
    finally:
        os.close(still_writing)
        launch.close()
