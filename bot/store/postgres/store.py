"""PostgresStore: the backend for several replicas, on asyncpg; one store per concern sharing one pool."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable

from bot.store.postgres.accounts import PostgresAccounts
from bot.store.postgres.api_tokens import PostgresApiTokens
from bot.store.postgres.approval_rules import PostgresApprovalRules
from bot.store.postgres.claims import PostgresClaims
from bot.store.postgres.conversations import PostgresConversations
from bot.store.postgres.dashboard import PostgresDashboard
from bot.store.postgres.database import Database
from bot.store.postgres.feedback import PostgresFeedback
from bot.store.postgres.fleet import PostgresFleet
from bot.store.postgres.forget import PostgresForget
from bot.store.postgres.group_context import PostgresGroupContext
from bot.store.postgres.handoffs import PostgresHandoffs
from bot.store.postgres.housekeeping import PostgresHousekeeping
from bot.store.postgres.inbox import PostgresInbox
from bot.store.postgres.jobs import PostgresJobs
from bot.store.postgres.memories import PostgresMemories
from bot.store.postgres.pairing import PostgresPairing
from bot.store.postgres.quotas import PostgresQuotas
from bot.store.postgres.relay import PostgresRelay
from bot.store.postgres.settings import PostgresSettings
from bot.store.postgres.summaries import PostgresSummaries
from bot.store.postgres.tasks import PostgresTasks
from bot.store.postgres.traces import PostgresTraces
from bot.store.postgres.usage import PostgresUsage
from bot.store.postgres.votes import PostgresVotes

POOL_SIZE = 10


class PostgresStore:
    def __init__(self, url: str, pool_size: int = POOL_SIZE, clock: Callable[[], float] = time.time,
                 replica: str | None = None, guest: bool = False) -> None:
        self._db = Database(url, pool_size)
        # connects only when a hub starts it; from then on a replica that owns nothing (silent past its
        # heartbeat) or not the chat writes no tree and no inbox finish: another replica may be answering
        self.claims = PostgresClaims(url, replica or default_replica_id(), self._db.backends, guest)
        self.conversations = PostgresConversations(self._db, self.claims.write)
        self.settings = PostgresSettings(self._db)
        self.inbox = PostgresInbox(self._db, clock, self.claims.write)  # wall clock: dedupe expiry survives restarts
        self.memories = PostgresMemories(self._db)
        self.pairing = PostgresPairing(self._db)
        self.handoffs = PostgresHandoffs(self._db)
        self.votes = PostgresVotes(self._db)
        self.feedback = PostgresFeedback(self._db)
        self.forget = PostgresForget(self._db)
        self.jobs = PostgresJobs(self._db)
        self.tasks = PostgresTasks(self._db, self.claims.write)
        self.dashboard = PostgresDashboard(self._db)
        self.housekeeping = PostgresHousekeeping(self._db)
        self.summaries = PostgresSummaries(self._db)
        self.group_context = PostgresGroupContext(self._db)
        self.traces = PostgresTraces(self._db)
        self.api_tokens = PostgresApiTokens(self._db)
        self.quotas = PostgresQuotas(self._db)
        self.usage = PostgresUsage(self._db)
        self.approval_rules = PostgresApprovalRules(self._db)
        self.relay = PostgresRelay(self._db, self.claims.replica)  # listens only once a hub starts it
        self.fleet = PostgresFleet(self._db)
        self.accounts = PostgresAccounts(self._db)

    async def open(self) -> None:
        await self._db.open()

    async def close(self) -> None:
        await self._db.close()


def default_replica_id() -> str:
    """Unique while the process lives: two replicas never share one, and a restart is a new replica."""
    return f"{socket.gethostname()}-{os.getpid()}"
