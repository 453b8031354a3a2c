"""Figures per agent and identity: answers, tokens, cost, errors and the wait for the first text, for the
overview and as `/metrics` labels. Labelled by agent and identity only (a deployment has a handful of each),
never by chat, so the series stay few however many chats there are."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram

FIRST_TEXT_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60)
LATENCIES_KEPT = 200  # the newest first-text waits per (agent, identity), for the overview's median
MAX_PAIRS = 200  # (agent, identity) pairs counted; beyond this a pair is counted as "other" (a misconfiguration)
OTHER = "other"


@dataclass
class Figures:
    answers: int = 0
    tokens: int = 0
    cost: float = 0.0
    errors: int = 0
    waits: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCIES_KEPT))

    @property
    def first_text_p50(self) -> float | None:
        ordered = sorted(self.waits)
        return ordered[len(ordered) // 2] if ordered else None


class AgentFigures:
    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["agent", "identity"]
        self.answers = Counter("bothub_agent_answers", "Agent runs, by agent and identity", labels, registry=registry)
        self.tokens = Counter("bothub_agent_tokens", "Tokens the provider reported, by agent and identity",
                              labels, registry=registry)
        self.cost = Counter("bothub_agent_cost", "Money by llm.prices, by agent and identity", labels,
                            registry=registry)
        self.errors = Counter("bothub_agent_errors", "Runs that ended without an answer, by agent and identity",
                              labels, registry=registry)
        self.first_text = Histogram("bothub_agent_first_text_seconds", "Wait for the first streamed text, by agent "
                                    "and identity", labels, buckets=FIRST_TEXT_BUCKETS, registry=registry)
        self.by_pair: dict[tuple[str, str], Figures] = {}

    def run(self, agent: str, identity: str, tokens: int, cost: float, failed: bool,
            first_text: float | None) -> None:
        """One finished run: its tokens and money, whether it ended without an answer, its wait for the first text."""
        key = (agent, identity) if (agent, identity) in self.by_pair or len(self.by_pair) < MAX_PAIRS \
            else (OTHER, OTHER)
        figures = self.by_pair.setdefault(key, Figures())
        figures.answers += 1
        figures.tokens += tokens
        figures.cost += cost
        figures.errors += failed
        self.answers.labels(*key).inc()
        self.tokens.labels(*key).inc(tokens)
        self.cost.labels(*key).inc(cost)
        if failed:
            self.errors.labels(*key).inc()
        if first_text is not None:
            figures.waits.append(first_text)
            self.first_text.labels(*key).observe(first_text)

    def rows(self) -> list[tuple[str, str, Figures]]:
        """(agent, identity, figures), the busiest first."""
        return sorted(((a, i, f) for (a, i), f in self.by_pair.items()), key=lambda row: -row[2].answers)
