"""Model providers' health as the operator sees it: one view per provider, and its /metrics families.

The views come from the running LLM client (bot/agent/health.py) each time they are read, so a scrape or a
dashboard load shows the breaker as it is at that moment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

STATES = ("closed", "half_open", "open")  # the gauge's value is the index: 0 healthy … 2 skipped


@dataclass(frozen=True, slots=True)
class HealthView:
    """What `doctor`, the dashboard and /metrics show for one provider."""

    provider: str
    state: str  # "closed" | "open" | "half_open"
    last_error: str | None  # the failure kind and how long ago, e.g. "server (12 s ago)"
    latency: float | None  # seconds to the first token, smoothed
    requests: int
    failures: int  # the ones that said the provider is unwell (5xx, 429, timeouts …)


class ProviderCollector(Collector):
    def __init__(self, views: Callable[[], list[HealthView]]) -> None:
        self._views = views

    def collect(self) -> Iterator[Metric]:
        state = GaugeMetricFamily("bothub_llm_provider_state", "Breaker per provider: 0 closed, 1 half-open, 2 open",
                                  labels=["provider"])
        latency = GaugeMetricFamily("bothub_llm_provider_latency_seconds",
                                    "Smoothed time to the first token per provider", labels=["provider"])
        requests = CounterMetricFamily("bothub_llm_provider_requests", "Model requests per provider",
                                       labels=["provider"])
        failures = CounterMetricFamily("bothub_llm_provider_failures",
                                       "Requests per provider that failed for the provider's sake", labels=["provider"])
        for view in self._views():
            state.add_metric([view.provider], STATES.index(view.state))
            if view.latency is not None:
                latency.add_metric([view.provider], view.latency)
            requests.add_metric([view.provider], view.requests)
            failures.add_metric([view.provider], view.failures)
        yield from (state, latency, requests, failures)
