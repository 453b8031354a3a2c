"""Which replica does what: chats one replica at a time, and numbered roles (a poller, gateway shards).

A claim lasts as long as the replica's connection to the database: when the process dies, the database
drops the connection and its claims with it, so another replica can take over without any clock. On an
embedded database there is one process, which holds everything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

Wake = Callable[[int, str], None]  # (inbox entry id, session) was accepted by some replica
Lost = Callable[[], None]  # the connection holding the claims died: every claim is gone


class Claims(Protocol):
    replica: str  # this replica's id, for /readyz and the logs

    @property
    def shared(self) -> bool:
        """True when other replicas may exist (claims mean something), False for the one-process store."""
        ...

    @property
    def sessions(self) -> frozenset[str]:
        """The chats this replica owns (empty where one process owns everything)."""
        ...

    @property
    def roles(self) -> frozenset[str]:
        """The roles this replica holds (empty where one process holds everything)."""
        ...

    async def start(self, wake: Wake, lost: Lost) -> None:
        """Connect, announce this replica and listen for accepted inbox entries."""
        ...

    async def stop(self) -> None: ...

    def holds(self, session: str) -> bool:
        """This replica owns the chat (no database call)."""
        ...

    async def claim(self, session: str) -> bool:
        """Own the chat now if nobody does; True if this replica owns it afterwards."""
        ...

    async def release(self, sessions: Sequence[str]) -> None: ...

    async def sweep(self, platforms: Sequence[str]) -> list[str]:
        """The chats of these platforms with inbox entries waiting over a second that this replica owns now:
        its own, and those nobody owned, claimed by this call."""
        ...

    async def replicas(self) -> int:
        """How many replicas are connected now (this one included)."""
        ...

    async def lead(self, role: str) -> bool:
        """Take a role nobody holds (e.g. `poller:0`); True if this replica holds it afterwards."""
        ...

    async def resign(self, role: str) -> None: ...


class SoloClaims:
    """The embedded store's claims: one process, so it owns every chat and holds every role."""

    replica = "solo"
    shared = False
    sessions: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()

    async def start(self, wake: Wake, lost: Lost) -> None:
        return None

    async def stop(self) -> None:
        return None

    def holds(self, session: str) -> bool:
        return True

    async def claim(self, session: str) -> bool:
        return True

    async def release(self, sessions: Sequence[str]) -> None:
        return None

    async def sweep(self, platforms: Sequence[str]) -> list[str]:
        return []

    async def replicas(self) -> int:
        return 1

    async def lead(self, role: str) -> bool:
        return True

    async def resign(self, role: str) -> None:
        return None
