"""Tokens of the HTTP API: only a digest of each token is kept, so a copy of the database lets no one in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ApiToken:
    id: str  # public: names the token in the dashboard and namespaces its chats
    name: str  # what the admin called it (the system that uses it)
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def live(self) -> bool:
        return self.revoked_at is None


class ApiTokenStore(Protocol):
    async def add(self, token_id: str, name: str, digest: str) -> ApiToken:
        """Store a new token under its digest (the token itself never reaches the store)."""
        ...

    async def by_digest(self, digest: str) -> ApiToken | None:
        """The token with this digest, revoked ones included (the caller refuses those)."""
        ...

    async def list(self) -> list[ApiToken]:
        """Every token, newest first."""
        ...

    async def revoke(self, token_id: str) -> bool:
        """Revoke a live token; False when there is no such token or it was revoked already."""
        ...
