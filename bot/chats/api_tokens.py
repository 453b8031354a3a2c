"""HTTP API tokens: made here, shown once, kept only as a SHA-256 digest, checked on every request.

A token is 256 random bits, so a plain digest is enough (no slow hash is needed against guessing), and a
lookup by digest compares nothing in Python that could leak timing about a stored token.
"""

from __future__ import annotations

import hashlib
import secrets

from bot.adapter import TokenHolder
from bot.store import ApiToken, ApiTokenStore, DashboardStore

PREFIX = "bothub_"
MAX_NAME = 80


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ApiTokens:
    """Creating and revoking are admin actions: each is written to the audit log with who did it."""

    def __init__(self, store: ApiTokenStore, audit: DashboardStore) -> None:
        self.store = store
        self._audit = audit

    async def create(self, name: str, actor: str) -> tuple[ApiToken, str]:
        """A new token named `name`; returns it with the secret, which is shown once and never stored."""
        name = " ".join(name.split())[:MAX_NAME]
        if not name:
            raise ValueError("give the token a name (the system that will use it)")
        secret = PREFIX + secrets.token_urlsafe(32)
        made = await self.store.add(secrets.token_hex(6), name, digest(secret))
        await self._audit.add_audit(actor, "api-token-create", made.id, made.name)
        return made, secret

    async def check(self, secret: str) -> TokenHolder | None:
        """Who a presented token belongs to; None for an unknown or revoked one."""
        if not secret.startswith(PREFIX) or len(secret) > 200:
            return None
        key = digest(secret)
        token = await self.store.by_digest(key)
        return TokenHolder(token.id, token.name, key) if token is not None and token.live else None

    async def list(self) -> list[ApiToken]:
        return await self.store.list()

    async def revoke(self, token_id: str, actor: str) -> bool:
        """False when there is no live token with this id (nothing is audited then)."""
        revoked = await self.store.revoke(token_id.strip())
        if revoked:
            await self._audit.add_audit(actor, "api-token-revoke", token_id.strip())
        return revoked
