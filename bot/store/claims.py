"""Which replica does what: chats one replica at a time, and numbered roles (a poller, gateway shards).

Chats are owned by hash partition (PARTITIONS of them), so the number of claims is bounded whatever the
number of chats, and the load spreads by hash. A claim lasts as long as the replica's connection to the
database: when the process dies, the database drops the connection and its claims with it, so another
replica can take over without any clock. On an embedded database there is one process, which holds
everything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Sequence
from typing import Protocol

PARTITIONS = 1024


def partition(session: str) -> int:
    """The chat's partition: the same on every replica and every release (not Python's salted hash), and well
    mixed (CRC-32 kept sequential chat ids in one half of the partitions)."""
    digest = hashlib.blake2b(session.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % PARTITIONS


class NotOwner(Exception):
    """A write refused: this replica owns nothing now (silent past its heartbeat, cut off), not this chat, or no
    longer at the epoch it took the chat's partition at (another replica took it over: fenced)."""


Wake = Callable[[int, str], None]  # (inbox entry id, session) was accepted by some replica
Lost = Callable[[], None]  # the connection holding the claims died: every claim is gone
Wanted = Callable[[int], None]  # another replica has work for a chat in this partition (not an inbox entry)


class Claims(Protocol):
    replica: str  # this replica's id, for /readyz and the logs
    guest: bool  # beside the replicas, not one of them (`bothub chat`): no share of partitions, only its chats'

    @property
    def shared(self) -> bool:
        """True when other replicas may exist (claims mean something), False for the one-process store."""
        ...

    @property
    def partitions(self) -> frozenset[int]:
        """The partitions this replica owns (empty where one process owns everything)."""
        ...

    @property
    def roles(self) -> frozenset[str]:
        """The roles this replica holds (empty where one process holds everything)."""
        ...

    async def start(self, wake: Wake, lost: Lost, wanted: Wanted) -> None:
        """Connect, announce this replica and listen for accepted inbox entries and wanted partitions."""
        ...

    async def stop(self) -> None: ...

    def holds(self, session: str) -> bool:
        """This replica owns the chat's partition (no database call)."""
        ...

    async def confirm(self, session: str) -> None:
        """NotOwner unless this replica owns the chat now; no database call while its heartbeat is recent, else
        the late heartbeat is sent first (a replica woken from a freeze learns its chats were taken)."""
        ...

    async def claim(self, session: str) -> bool:
        """Own the chat's partition now if nobody does; True if this replica owns it afterwards."""
        ...

    async def take(self, count: int, avoid: Collection[int] = ()) -> list[int]:
        """Own up to `count` more partitions that nobody owns, none of `avoid`; returns the ones taken."""
        ...

    async def release(self, partitions: Collection[int]) -> None: ...

    async def want(self, session: str) -> None:
        """Ask the chat's owner to let its partition go once its chats are idle (work waits for it here)."""
        ...

    async def sweep(self, platforms: Sequence[str]) -> list[str]:
        """The chats of these platforms with inbox entries waiting that this replica owns now: those in its
        partitions, and those waiting over a second in partitions nobody owned, taken by this call."""
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
    guest = False
    shared = False
    partitions: frozenset[int] = frozenset()
    roles: frozenset[str] = frozenset()

    async def start(self, wake: Wake, lost: Lost, wanted: Wanted) -> None:
        return None

    async def stop(self) -> None:
        return None

    def holds(self, session: str) -> bool:
        return True

    async def confirm(self, session: str) -> None:
        return None

    async def claim(self, session: str) -> bool:
        return True

    async def take(self, count: int, avoid: Collection[int] = ()) -> list[int]:
        return []

    async def release(self, partitions: Collection[int]) -> None:
        return None

    async def want(self, session: str) -> None:
        return None

    async def sweep(self, platforms: Sequence[str]) -> list[str]:
        return []

    async def replicas(self) -> int:
        return 1

    async def lead(self, role: str) -> bool:
        return True

    async def resign(self, role: str) -> None:
        return None
