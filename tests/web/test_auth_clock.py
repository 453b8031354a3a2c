"""The dashboard's sign-in bookkeeping on a clock the test moves: stored hashes of another kind or malformed never
match, a client's failures are forgotten after FORGET_AFTER, and an idle session expires (and is dropped)."""

from __future__ import annotations

import pytest

from bot.httpkit.auth import (
    FORGET_AFTER,
    MAX_FAILURES,
    SESSION_IDLE,
    Auth,
    TooManyAttempts,
    hash_password,
    verify_password,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_only_a_well_formed_scrypt_hash_of_the_password_matches() -> None:
    stored = hash_password("correct horse")
    assert verify_password(stored, "correct horse") and not verify_password(stored, "wrong horse")
    for other in (stored.replace("scrypt$", "bcrypt$", 1), "scrypt$x$y", "scrypt$1$8$1$!!$!!", ""):
        assert not verify_password(other, "correct horse"), other


def test_failures_are_forgotten_after_a_while_and_idle_sessions_expire() -> None:
    clock = Clock()
    auth = Auth(password="secret", clock=clock)
    for _ in range(MAX_FAILURES):
        with pytest.raises(PermissionError):
            auth.check_password("guess", "10.0.0.1")
    with pytest.raises(TooManyAttempts):
        auth.check_password("secret", "10.0.0.1")  # blocked: not even the right one is checked
    clock.now += FORGET_AFTER + 1
    with pytest.raises(PermissionError):
        auth.check_password("guess", "10.0.0.1")  # counted from one again: not blocked
    session = auth.check_password("secret", "10.0.0.1")
    clock.now += SESSION_IDLE - 1
    assert auth.session(session.token) is session  # in use: its idle timer starts again
    clock.now += SESSION_IDLE - 1
    assert auth.session(session.token) is session
    clock.now += SESSION_IDLE
    assert auth.session(session.token) is None and auth.session(session.token) is None  # expired, then gone
    stale = auth.new_session()
    clock.now += SESSION_IDLE
    fresh = auth.new_session()  # drops the expired one on the way
    assert auth.session(stale.token) is None and auth.session(fresh.token) is fresh
