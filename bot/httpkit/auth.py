"""Sign-in for the dashboard and the web chat it hosts: always a credential, in-memory sessions, a CSRF token
per session, throttled attempts.

The credential is the admin password (BOTHUB_ADMIN_PASSWORD, or the scrypt hash `bothub set-password`
stored) or, with neither, a one-time sign-in token made at start and printed as a link, as notebook servers
do: the first visit with it gets a session and the token is spent. Sessions live in memory on purpose: a
restart signs everyone out, and no session secret ever reaches the database or a backup. Failed attempts are
counted per client address; past the limit the address cools down for a while that doubles with each further
miss, then may try again, so the right password still gets through and one address cannot lock out others.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

SESSION_COOKIE = "bothub_session"
SESSION_IDLE = 12 * 3600.0  # seconds a session lives without a request
MAX_FAILURES = 5  # misses per address before it must cool down
COOL_DOWN = 5.0  # seconds of the first cool-down; each further miss doubles it
MAX_COOL_DOWN = 300.0
FORGET_AFTER = 3600.0  # an address quiet this long starts afresh
SCRYPT = {"n": 2**15, "r": 8, "p": 1}  # ≈ 50 ms and 32 MiB per check: cheap to sign in, dear to guess
SCRYPT_MAXMEM = 64 * 1024 * 1024
# checked when no account has the name, so a wrong name costs the same time as a wrong password
_NO_ACCOUNT = "scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="


def hash_password(password: str) -> str:
    """`scrypt$n$r$p$salt$hash` (base64), what `bothub set-password` stores."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, maxmem=SCRYPT_MAXMEM, **SCRYPT)
    b64 = base64.b64encode
    return f"scrypt${SCRYPT['n']}${SCRYPT['r']}${SCRYPT['p']}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(stored: str, password: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.strip().split("$")
        if kind != "scrypt":
            return False
        given = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                               maxmem=SCRYPT_MAXMEM)
    except ValueError:
        return False
    return hmac.compare_digest(given, base64.b64decode(digest))


class TooManyAttempts(Exception):
    def __init__(self, retry_after: float) -> None:
        super().__init__(f"too many sign-in attempts; try again in {retry_after:.0f} s")
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Who:
    """Who a session is: the admin password (or link) is the owner with no name; an account has its name, role and
    agents (bot/store/accounts.py)."""

    account: str = ""
    role: str = "owner"
    agents: tuple[str, ...] = ()

    @property
    def scoped(self) -> bool:
        """Sees only its agents' part of the dashboard."""
        return self.role != "owner"


@dataclass
class WebSession:
    token: str
    csrf: str
    expires: float
    chat_id: str = field(default_factory=lambda: secrets.token_hex(8))  # this browser's web chat
    who: Who = field(default_factory=Who)


@dataclass
class _Misses:
    count: int = 0
    last: float = 0.0
    blocked_until: float = 0.0


class Auth:
    """`password` (plain, from the environment) wins over `password_hash`; with neither, a one-time token."""

    def __init__(self, password: str | None = None, password_hash: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._digest = hashlib.sha256(password.encode()).digest() if password else None
        self._hash = None if password else password_hash
        self.sign_in_token: str | None = None if password or password_hash else secrets.token_urlsafe(32)
        self._clock = clock
        self._sessions: dict[str, WebSession] = {}
        self._misses: dict[str, _Misses] = {}

    @property
    def mode(self) -> str:
        """How one signs in: "password", "stored password" or "sign-in link" (`doctor` and the login page)."""
        return "password" if self._digest else "stored password" if self._hash else "sign-in link"

    def check_password(self, password: str, client: str) -> WebSession:
        """A new session for the right password; raises TooManyAttempts or PermissionError otherwise."""
        return self._attempt(client, lambda: self._password_ok(password))

    def check_account(self, who: Who, password_hash: str | None, password: str, client: str) -> WebSession:
        """A session for an account's right password (`password_hash` None: no such account, refused the same way,
        throttled the same way)."""
        session = self._attempt(client, lambda: verify_password(password_hash or _NO_ACCOUNT, password)
                                and password_hash is not None)
        session.who = who
        return session

    def redeem(self, token: str, client: str) -> WebSession:
        """The one-time token's session; the token is spent, so a copied link is worth nothing afterwards."""
        expected = self.sign_in_token

        def ok() -> bool:
            return expected is not None and hmac.compare_digest(token.encode(), expected.encode())

        session = self._attempt(client, ok)
        self.sign_in_token = None
        return session

    def _password_ok(self, password: str) -> bool:
        if self._digest is not None:
            return hmac.compare_digest(hashlib.sha256(password.encode()).digest(), self._digest)
        return self._hash is not None and verify_password(self._hash, password)

    def _attempt(self, client: str, check: Callable[[], bool]) -> WebSession:
        now = self._clock()
        misses = self._misses.get(client)
        if misses is not None and now - misses.last > FORGET_AFTER:
            del self._misses[client]
            misses = None
        if misses is not None and now < misses.blocked_until:
            raise TooManyAttempts(misses.blocked_until - now)  # not checked, not counted: just wait
        if not check():
            misses = self._misses.setdefault(client, _Misses())
            misses.count, misses.last = misses.count + 1, now
            if misses.count >= MAX_FAILURES:
                misses.blocked_until = now + min(MAX_COOL_DOWN, COOL_DOWN * 2 ** (misses.count - MAX_FAILURES))
            raise PermissionError("wrong password")
        self._misses.pop(client, None)
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

    def end_sessions(self, account: str) -> None:
        """An account changed or removed: its sessions end (it signs in again, as what it is now)."""
        for token in [t for t, s in self._sessions.items() if s.who.account == account]:
            del self._sessions[token]

    def logout(self, token: str) -> None:
        self._sessions.pop(token, None)

    @staticmethod
    def csrf_ok(session: WebSession, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(session.csrf.encode(), str(given).encode())
