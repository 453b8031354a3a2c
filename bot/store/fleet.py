"""Agents, identities and bindings as rows (their typed form is bot/fleet/model.py), with a history of every
change: who changed what, when. An identity's credentials are stored sealed (bot/fleet/secrets.py): the store
never sees them in the clear, and the history records only that they changed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

Kind = Literal["agent", "identity", "binding"]
KINDS: tuple[Kind, ...] = ("agent", "identity", "binding")


@dataclass(frozen=True, slots=True)
class FleetRow:
    kind: Kind
    name: str  # an agent's or identity's name; a binding's place (Binding.key)
    spec: str  # the object as JSON, without credentials
    sealed: str | None = None  # an identity's sealed credentials
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class FleetChange:
    id: int  # grows with every change: a replica that saw change N only needs what came after
    at: datetime
    actor: str  # "cli", "apply", "dashboard:<account>"
    kind: Kind
    name: str
    action: Literal["put", "remove"]
    spec: str  # the new JSON ("" for a removal); never credentials
    credentials: bool = False  # the credentials were set or replaced


class FleetStore(Protocol):
    async def rows(self) -> list[FleetRow]:
        """Every agent, identity and binding, by kind and name (a handful to hundreds: read whole)."""
        ...

    async def put(self, row: FleetRow, actor: str) -> bool:
        """Insert or replace; `sealed=None` keeps the stored credentials. False (and no history line) when nothing
        changed: applying the same file twice is a no-op."""
        ...

    async def remove(self, kind: Kind, name: str, actor: str) -> bool:
        ...

    async def changes(self, limit: int = 100, kind: Kind | None = None) -> list[FleetChange]:
        """The history, newest first."""
        ...

    async def version(self) -> int:
        """The id of the latest change (0: none): replicas poll it, or wait for its notification."""
        ...

    async def listen(self, changed: Callable[[], None]) -> Callable[[], Awaitable[None]]:
        """Call `changed` soon after any process commits a change (PostgreSQL: LISTEN on its own connection);
        returns how to stop. A backend without notifications returns at once: its readers poll `version`."""
        ...

    async def reseal(self, change: Callable[[str, str], str]) -> int:
        """Every sealed value through `change(sealed, identity name)`, in one transaction (a new key); how many."""
        ...
