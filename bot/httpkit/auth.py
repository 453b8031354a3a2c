"""Sign-in for the dashboard and the web chat it hosts: one admin password, in-memory sessions, a CSRF token
per session, rate-limited logins.

Sessions live in memory on purpose: a restart signs everyone out, and no session secret ever reaches the
database or a backup. The password is compared in constant time; failed attempts are counted per client
address in a sliding window, and while an address is over the limit even the right password is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

SESSION_COOKIE = "bothub_session"
SESSION_IDLE = 12 * 3600.0  # seconds a session lives without a request
MAX_FAILURES = 5  # wrong passwords per address per window
FAILURE_WINDOW = 60.0  # seconds


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class TooManyAttempts(Exception):
    def __init__(self, retry_after: float) -> None:
        super().__init__(f"too many sign-in attempts; try again in {retry_after:.0f} s")
        self.retry_after = retry_after


@dataclass
class WebSession:
    token: str
    csrf: str
    expires: float
    chat_id: str = field(default_factory=lambda: secrets.token_hex(8))  # this browser's web chat


class Auth:
    """`password=None` means open access (allowed only on a loopback bind): every visitor gets a session."""

    def __init__(self, password: str | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._digest = hashlib.sha256(password.encode()).digest() if password else None
        self._clock = clock
        self._sessions: dict[str, WebSession] = {}
        self._failures: dict[str, deque[float]] = {}

    @property
    def open_access(self) -> bool:
        return self._digest is None

    def check_password(self, password: str, client: str) -> WebSession:
        """A new session for the right password; raises TooManyAttempts or PermissionError otherwise."""
        now = self._clock()
        failures = self._failures.setdefault(client, deque())
        while failures and failures[0] <= now - FAILURE_WINDOW:
            failures.popleft()
        if len(failures) >= MAX_FAILURES:
            raise TooManyAttempts(failures[0] + FAILURE_WINDOW - now)
        given = hashlib.sha256(password.encode()).digest()
        if self._digest is not None and not hmac.compare_digest(given, self._digest):
            failures.append(now)
            raise PermissionError("wrong password")
        self._failures.pop(client, None)
        return self.new_session()

    def new_session(self) -> WebSession:
        now = self._clock()
        for token in [t for t, s in self._sessions.items() if s.expires <= now]:
            del self._sessions[token]
        session = WebSession(secrets.token_urlsafe(32), secrets.token_urlsafe(32), now + SESSION_IDLE)
        self._sessions[session.token] = session
        return session

    def session(self, token: str | None) -> WebSession | None:
        """The live session for a cookie value, its idle timer renewed; None if unknown or expired."""
        session = self._sessions.get(token) if token else None
        if session is None:
            return None
        now = self._clock()
        if session.expires <= now:
            del self._sessions[session.token]
            return None
        session.expires = now + SESSION_IDLE
        return session

    def logout(self, token: str) -> None:
        self._sessions.pop(token, None)

    @staticmethod
    def csrf_ok(session: WebSession, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(session.csrf.encode(), str(given).encode())
