"""Persistence behind small Protocols, one module per concern; the backends (`bot.store.sqlite`, …)
implement them and are the only place in the repo that speaks SQL."""

from __future__ import annotations

from typing import Protocol

from bot.adapter import Relay
from bot.store.accounts import Account, AccountStore
from bot.store.api_tokens import ApiToken, ApiTokenStore
from bot.store.approval_rules import ApprovalRule, ApprovalRuleStore
from bot.store.claims import Claims
from bot.store.conversations import ConversationInfo, ConversationStore, OpenedChat
from bot.store.dashboard import DashboardStore
from bot.store.feedback import FeedbackStore, Tally
from bot.store.fleet import FleetChange, FleetRow, FleetStore
from bot.store.forget import ForgetStore
from bot.store.group_context import GroupContextStore, HeardLine
from bot.store.handoffs import HandoffStore
from bot.store.housekeeping import ConversationMatch, HousekeepingStore, PurgedConversation
from bot.store.inbox import InboxEntry, InboxStore
from bot.store.jobs import Job, JobStore, NewJob
from bot.store.memories import MemoryEntry, MemoryStore
from bot.store.pairing import PairingStore
from bot.store.quotas import QuotaStore
from bot.store.settings import ChatSettings, SettingsStore
from bot.store.summaries import Summary, SummaryStore
from bot.store.tasks import Task, TaskStore
from bot.store.traces import PromptSection, Trace, TraceStep, TraceStore
from bot.store.usage import UsageRecord, UsageStore, UsageTotals
from bot.store.votes import VoteStore


class StoreRelay(Relay, Protocol):
    async def start(self) -> None:
        """Listen (a hub's replica; tools that only open the store do not)."""
        ...

    async def stop(self) -> None: ...


class Store(Protocol):
    """One backend: a store per concern sharing one database, opened and closed together."""

    @property
    def conversations(self) -> ConversationStore: ...
    @property
    def settings(self) -> SettingsStore: ...
    @property
    def inbox(self) -> InboxStore: ...
    @property
    def memories(self) -> MemoryStore: ...
    @property
    def pairing(self) -> PairingStore: ...
    @property
    def handoffs(self) -> HandoffStore: ...
    @property
    def votes(self) -> VoteStore: ...
    @property
    def feedback(self) -> FeedbackStore: ...
    @property
    def forget(self) -> ForgetStore: ...
    @property
    def jobs(self) -> JobStore: ...
    @property
    def tasks(self) -> TaskStore: ...
    @property
    def dashboard(self) -> DashboardStore: ...
    @property
    def summaries(self) -> SummaryStore: ...
    @property
    def group_context(self) -> GroupContextStore: ...
    @property
    def traces(self) -> TraceStore: ...
    @property
    def housekeeping(self) -> HousekeepingStore: ...
    @property
    def api_tokens(self) -> ApiTokenStore: ...
    @property
    def usage(self) -> UsageStore: ...
    @property
    def quotas(self) -> QuotaStore: ...
    @property
    def approval_rules(self) -> ApprovalRuleStore: ...
    @property
    def fleet(self) -> FleetStore: ...
    @property
    def accounts(self) -> AccountStore: ...
    @property
    def claims(self) -> Claims: ...
    @property
    def relay(self) -> StoreRelay | None:
        """Events between replicas (None for the one-process store)."""
        ...

    async def open(self) -> None:
        """Connect and run the migrations this database has not seen yet."""
        ...

    async def close(self) -> None: ...


__all__ = [
    "Account",
    "AccountStore",
    "ApiToken",
    "ApiTokenStore",
    "ApprovalRule",
    "ApprovalRuleStore",
    "ChatSettings",
    "Claims",
    "ConversationInfo",
    "ConversationMatch",
    "ConversationStore",
    "DashboardStore",
    "FeedbackStore",
    "FleetChange",
    "FleetRow",
    "FleetStore",
    "GroupContextStore",
    "HandoffStore",
    "HeardLine",
    "HousekeepingStore",
    "InboxEntry",
    "InboxStore",
    "Job",
    "JobStore",
    "MemoryEntry",
    "MemoryStore",
    "NewJob",
    "OpenedChat",
    "PairingStore",
    "PromptSection",
    "PurgedConversation",
    "QuotaStore",
    "SettingsStore",
    "Store",
    "Summary",
    "SummaryStore",
    "Tally",
    "Task",
    "TaskStore",
    "Trace",
    "TraceStep",
    "TraceStore",
    "UsageRecord",
    "UsageStore",
    "UsageTotals",
    "VoteStore",
]
