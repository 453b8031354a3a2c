"""Numbered roles spread over the live replicas: the single long poller (one role), gateway shards (N).

Each replica holds at most its fair share, ceil(N / live replicas), of a group's roles: it takes free ones
up to that share and hands back one a second above it, so a new replica gets work and a dead one's roles
(released by the database with its connection) are taken within about a second. An adapter hears the set
it holds through its callback; with the embedded store, one process holds every role from the start.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot.store.claims import Claims

log = logging.getLogger("bothub.replicas")

BALANCE_EVERY = 1.0  # seconds
OnChange = Callable[[frozenset[int]], Awaitable[None]]


@dataclass
class _Group:
    name: str
    count: int
    on_change: OnChange
    held: frozenset[int] | None = None  # None until the first share was handed over (an empty one too)
    changing: asyncio.Lock = field(default_factory=asyncio.Lock)

    def role(self, index: int) -> str:
        return f"{self.name}:{index}"


class Partitions:
    def __init__(self, claims: Claims) -> None:
        self._claims = claims
        self._groups: dict[str, _Group] = {}
        self._task: asyncio.Task[None] | None = None

    async def share(self, name: str, count: int, on_change: OnChange) -> None:
        """Hold a fair share of roles `name:0` … `name:count-1`; returns once the first share was handed over."""
        group = self._groups[name] = _Group(name, count, on_change)
        await self._balance(group)
        if self._claims.shared and self._task is None:
            self._task = asyncio.create_task(self._balance_forever(), name="partitions")

    def held(self) -> dict[str, list[int]]:
        return {name: sorted(group.held or ()) for name, group in self._groups.items()}

    def report(self, chats: Callable[[], list[str]]) -> dict[str, object] | None:
        """For /readyz: who this replica is and what it holds, its active `chats` among it (nothing to say for the
        one-process store)."""
        if not self._claims.shared:
            return None
        active = chats()
        return {"id": self._claims.replica, "roles": self.held(), "partitions": len(self._claims.partitions),
                "chats_active": len(active), "chats": active[:200]}

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        self._groups.clear()

    async def _balance_forever(self) -> None:
        while True:
            await asyncio.sleep(BALANCE_EVERY)
            for group in list(self._groups.values()):
                try:
                    await self._balance(group)
                except Exception:
                    log.exception("replica %s: balancing %s failed", self._claims.replica, group.name)

    async def _balance(self, group: _Group) -> None:
        if not self._claims.shared:
            await self._hand_over(group, frozenset(range(group.count)))
            return
        roles = self._claims.roles  # a lost connection empties it: what was held is gone
        held = {i for i in range(group.count) if group.role(i) in roles}
        fair = math.ceil(group.count / max(1, await self._claims.replicas()))
        if len(held) > fair:
            surplus = max(held)
            held.discard(surplus)
            await self._hand_over(group, frozenset(held))  # stop using it before anyone else can take it
            await self._claims.resign(group.role(surplus))
            return
        for index in range(group.count):
            if len(held) >= fair:
                break
            if index not in held and await self._claims.lead(group.role(index)):
                held.add(index)
        await self._hand_over(group, frozenset(held))

    async def _hand_over(self, group: _Group, held: frozenset[int]) -> None:
        async with group.changing:
            if held == group.held:
                return
            log.info("replica %s: %s %s", self._claims.replica, group.name, sorted(held) or "none")
            group.held = held
            await group.on_change(held)
