"""Each replica's fair share of the chat partitions: taken up to ceil(PARTITIONS / live replicas), idle ones
above it handed back, so a replica that joins gets work within seconds and a dead one's partitions (freed by
the database with its connection) are taken within about a second.

A partition another replica asked for (it has work for a chat there that is no inbox entry, such as a
dashboard action) is handed back once its chats are idle, and not taken again here for a while.

A guest (`bothub chat` on the replicas' database) has no share: it claims a partition when one of its own chats
needs it and hands it back once idle, so the replicas keep answering every other chat.
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection

from bot.store.claims import PARTITIONS, Claims

GIVEN_AWAY = 10.0  # seconds a partition handed over on request is left to the replica that asked


class FairShare:
    def __init__(self, claims: Claims) -> None:
        self._claims = claims
        self._asked: set[int] = set()  # held here, wanted by another replica
        self._given: dict[int, float] = {}  # handed over on request → until when it is left alone
        self.replicas = 1  # live replicas at the last balance (they share each platform's global budget)

    def asked(self, partition: int) -> None:
        self._asked.add(partition)

    def clear(self) -> None:
        self._asked.clear()

    async def balance(self, busy: Collection[int]) -> tuple[list[int], list[int]]:
        """Take or hand back partitions towards this replica's share; `busy`: partitions with work in
        progress here, never handed back. Returns (taken, handed back)."""
        held = self._claims.partitions
        now = time.monotonic()
        self._given = {p: until for p, until in self._given.items() if until > now}
        given = [p for p in self._asked if p in held and p not in busy]
        self._asked.difference_update(given)
        self._given.update((p, now + GIVEN_AWAY) for p in given)
        self.replicas = max(1, await self._claims.replicas())
        fair = 0 if self._claims.guest else math.ceil(PARTITIONS / self.replicas)  # a guest keeps only what is busy
        keep = len(held) - len(given)
        idle = [p for p in sorted(held, reverse=True) if p not in busy and p not in given]
        surplus = idle[:max(0, keep - fair)]
        away = given + surplus
        if away:
            await self._claims.release(away)
        taken = await self._claims.take(fair - keep, avoid=self._given) if keep < fair else []
        return taken, away
