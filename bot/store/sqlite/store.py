"""SqliteStore: the embedded default backend, one store per concern sharing one database thread."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from bot.store.claims import SoloClaims
from bot.store.sqlite.accounts import SqliteAccounts
from bot.store.sqlite.api_tokens import SqliteApiTokens
from bot.store.sqlite.approval_rules import SqliteApprovalRules
from bot.store.sqlite.conversations import SqliteConversations
from bot.store.sqlite.dashboard import SqliteDashboard
from bot.store.sqlite.database import Database
from bot.store.sqlite.feedback import SqliteFeedback
from bot.store.sqlite.fleet import SqliteFleet
from bot.store.sqlite.forget import SqliteForget
from bot.store.sqlite.group_context import SqliteGroupContext
from bot.store.sqlite.handoffs import SqliteHandoffs
from bot.store.sqlite.housekeeping import SqliteHousekeeping
from bot.store.sqlite.inbox import SqliteInbox
from bot.store.sqlite.jobs import SqliteJobs
from bot.store.sqlite.memories import SqliteMemories
from bot.store.sqlite.migrations import migrate
from bot.store.sqlite.pairing import SqlitePairing
from bot.store.sqlite.quotas import SqliteQuotas
from bot.store.sqlite.settings import SqliteSettings
from bot.store.sqlite.summaries import SqliteSummaries
from bot.store.sqlite.tasks import SqliteTasks
from bot.store.sqlite.traces import SqliteTraces
from bot.store.sqlite.usage import SqliteUsage
from bot.store.sqlite.vectors import load_vectors
from bot.store.sqlite.votes import SqliteVotes


class SqliteStore:
    """SQLite in WAL mode on its own thread; each call is one operation there (one transaction for writes)."""

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time) -> None:
        self._db = Database(str(path))
        self.conversations = SqliteConversations(self._db)
        self.settings = SqliteSettings(self._db)
        self.inbox = SqliteInbox(self._db, clock)  # wall clock: dedupe expiry must survive restarts
        self.memories = SqliteMemories(self._db)
        self.pairing = SqlitePairing(self._db)
        self.handoffs = SqliteHandoffs(self._db)
        self.votes = SqliteVotes(self._db)
        self.feedback = SqliteFeedback(self._db)
        self.forget = SqliteForget(self._db)
        self.jobs = SqliteJobs(self._db)
        self.tasks = SqliteTasks(self._db)
        self.dashboard = SqliteDashboard(self._db)
        self.housekeeping = SqliteHousekeeping(self._db)
        self.summaries = SqliteSummaries(self._db)
        self.group_context = SqliteGroupContext(self._db)
        self.traces = SqliteTraces(self._db)
        self.api_tokens = SqliteApiTokens(self._db)
        self.quotas = SqliteQuotas(self._db)
        self.usage = SqliteUsage(self._db)
        self.approval_rules = SqliteApprovalRules(self._db)
        self.fleet = SqliteFleet(self._db)
        self.accounts = SqliteAccounts(self._db)
        self.claims = SoloClaims()  # one process per SQLite file: it owns every chat
        self.relay = None  # ... and every reply is made where it is awaited

    async def open(self) -> None:
        await self._db.open(_setup)

    async def close(self) -> None:
        await self._db.close()


def _setup(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a commit survives SIGKILL
    db.execute("PRAGMA busy_timeout = 5000")
    load_vectors(db)
    migrate(db)
