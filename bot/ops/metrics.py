"""Prometheus metrics for one App, in a private registry so several apps (tests) never collide."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from bot.adapter import (
    Adapter,
    Capabilities,
    ChatUnavailable,
    Drafting,
    DraftsRefused,
    FileTransfer,
    MessageHandler,
    RateLimited,
    SendError,
)
from bot.messages import ChatRef, SentRef
from bot.ops.activity import Activity
from bot.ops.agent_figures import AgentFigures
from bot.ops.providers import HealthView, ProviderCollector
from bot.replies import Reply

RUN_BUCKETS = (0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)
FIRST_TOKEN_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60)


class Metrics:
    def __init__(self) -> None:
        self.activity = Activity()  # the last minutes, for the dashboard
        self.registry = CollectorRegistry()
        reg = self.registry
        self.messages_in = Counter("bothub_messages_in", "Inbound events handed to the hub", ["platform"],
                                   registry=reg)
        self.messages_out = Counter("bothub_messages_out", "Messages sent", ["platform"], registry=reg)
        self.edits = Counter("bothub_message_edits", "Message edits (streaming)", ["platform"], registry=reg)
        self.runs = Counter("bothub_runs", "Agent runs by outcome", ["outcome"], registry=reg)
        self.run_seconds = Histogram("bothub_run_duration_seconds", "Wall time of one agent run",
                                     buckets=RUN_BUCKETS, registry=reg)
        self.first_token_seconds = Histogram("bothub_llm_first_token_seconds",
                                             "Time from run start to the first streamed text",
                                             buckets=FIRST_TOKEN_BUCKETS, registry=reg)
        self.errors = Counter("bothub_errors", "Errors by kind", ["kind"], registry=reg)
        # labels are models a duel may name (llm.allowed_models and chains): bounded by the configuration
        self.duel_votes = Counter("bothub_duel_votes", "Duel votes, by the model voted for", ["model"], registry=reg)
        self.duel_win_rate = Gauge("bothub_duel_win_rate", "Share of the duel votes cast where a model took part "
                                   "that went to it", ["model"], registry=reg)
        self.adapter_restarts = Counter("bothub_adapter_restarts", "Watchdog restarts", ["platform"],
                                        registry=reg)
        self.providers: Callable[[], list[HealthView]] = list  # the LLM client's, once watched
        self.llm_cost = Gauge("bothub_llm_cost", "Money by llm.prices for the requests since start", registry=reg)
        self.agents = AgentFigures(reg)  # per agent and identity (bounded labels)
        self.llm_tokens = Gauge("bothub_llm_tokens", "Tokens the provider reported since start", ["kind"],
                                registry=reg)

    def watch_usage(self, usage: Callable[[], tuple[int, int]], cost: Callable[[], float] = float) -> None:
        """Read the LLM client's running (prompt, completion) totals and money whenever /metrics is scraped."""
        self.llm_tokens.labels("prompt").set_function(lambda: usage()[0])
        self.llm_tokens.labels("completion").set_function(lambda: usage()[1])
        self.llm_cost.set_function(cost)

    def watch_providers(self, views: Callable[[], list[HealthView]]) -> None:
        """Each model provider's breaker, latency and counts, read on every scrape and dashboard load."""
        self.providers = views
        self.registry.register(ProviderCollector(views))

    def render(self) -> bytes:
        """The Prometheus text exposition of everything above."""
        return generate_latest(self.registry)

    def run_finished(self, outcome: str, seconds: float) -> None:
        """outcome: ok | failed | interrupted | deadline."""
        self.runs.labels(outcome).inc()
        self.run_seconds.observe(seconds)
        self.activity.record("run", detail=outcome, value=seconds)

    def message_in(self, platform: str) -> None:
        self.messages_in.labels(platform).inc()
        self.activity.record("in", platform)

    def first_text(self, seconds: float) -> None:
        """How long the person waited for the first streamed text of an answer."""
        self.first_token_seconds.observe(seconds)
        self.activity.record("first_text", value=seconds)

    def tool_called(self, name: str) -> None:
        self.activity.record("tool", detail=name)

    def failed_answers(self) -> int:
        """Runs that ended without an answer (provider down, deadline) plus internal errors, since start."""
        samples = [("bothub_runs_total", {"outcome": "failed"}), ("bothub_runs_total", {"outcome": "deadline"}),
                   ("bothub_errors_total", {"kind": "internal"})]
        return int(sum(self.registry.get_sample_value(name, labels) or 0 for name, labels in samples))

    def duel_vote(self, model: str, rates: Iterable[tuple[str, float]]) -> None:
        """A vote for `model`'s answer, and every model's win rate as the store now counts it."""
        self.duel_votes.labels(model).inc()
        for name, rate in rates:
            self.duel_win_rate.labels(name).set(rate)

    def error(self, kind: str, error_id: str = "", chat: str = "", trace: str = "") -> None:
        """Counted, and kept among the recent errors with the chat and run trace it came from, when known."""
        self.errors.labels(kind).inc()
        self.activity.record("error", chat.partition(":")[0], f"{kind} {error_id}".strip(), chat=chat, trace=trace)

    def instrument(self, adapter: Adapter) -> CountingAdapter:
        return CountingDrafter(adapter, self) if isinstance(adapter, Drafting) else CountingAdapter(adapter, self)


class CountingAdapter:
    """Wraps an adapter for the hub's Delivery, counting what actually reached the platform."""

    def __init__(self, inner: Adapter, metrics: Metrics) -> None:
        self.inner = inner
        self.name = inner.name
        self.capabilities: Capabilities = inner.capabilities
        self._metrics = metrics

    @property
    def files(self) -> FileTransfer | None:
        return self.inner.files

    async def start(self, on_message: MessageHandler) -> None:
        await self.inner.start(on_message)

    async def stop(self) -> None:
        await self.inner.stop()

    def connected(self) -> bool:
        return self.inner.connected()

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        try:
            ref = await self.inner.send(chat, reply, final=final)
        except SendError as e:
            self._metrics.error(_send_error_kind(e))
            raise
        self._metrics.messages_out.labels(self.name).inc()
        self._metrics.activity.record("out", self.name)
        return ref

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        try:
            await self.inner.edit(ref, reply, final=final)
        except SendError as e:
            self._metrics.error(_send_error_kind(e))
            raise
        self._metrics.edits.labels(self.name).inc()

    async def typing(self, chat: ChatRef) -> None:
        await self.inner.typing(chat)


class CountingDrafter(CountingAdapter):
    """The wrapper of an adapter that shows drafts (Drafting): a draft is no message, so only its failures count."""

    def __init__(self, inner: Adapter, metrics: Metrics) -> None:
        super().__init__(inner, metrics)
        assert isinstance(inner, Drafting)
        self._drafter = inner
        self.draft_interval, self.draft_life = inner.draft_interval, inner.draft_life

    async def draft(self, chat: ChatRef, reply: Reply, ref: SentRef | None) -> SentRef:
        try:
            return await self._drafter.draft(chat, reply, ref)
        except DraftsRefused:
            raise  # the platform's answer, not a failure: the hub streams by messages there
        except SendError as e:
            self._metrics.error(_send_error_kind(e))
            raise


def _send_error_kind(e: SendError) -> str:
    if isinstance(e, RateLimited):
        return "send_rate_limited"
    return "send_chat_unavailable" if isinstance(e, ChatUnavailable) else "send_failed"
