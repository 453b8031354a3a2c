"""Dashboard accounts besides the admin password: a name, a role and the agents it covers, and the scrypt hash of
its password (never the password). Few rows, read one at sign-in and whole on the accounts page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

Role = Literal["owner", "admin", "viewer"]
ROLES: tuple[Role, ...] = ("owner", "admin", "viewer")


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    role: Role  # owner: everything; admin: its agents' chats, traces and settings; viewer: those, read-only
    agents: tuple[str, ...] = ()  # admin and viewer: the agents whose chats it sees (owner: all)
    created_at: datetime | None = None


class AccountStore(Protocol):
    async def put(self, account: Account, password_hash: str | None) -> None:
        """Create or change an account; `password_hash=None` keeps the stored one (a new account needs one)."""
        ...

    async def get(self, name: str) -> tuple[Account, str] | None:
        """The account and its password hash, for sign-in."""
        ...

    async def list(self) -> list[Account]:
        """Every account, by name."""
        ...

    async def remove(self, name: str) -> bool:
        ...
