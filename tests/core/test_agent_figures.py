"""The figures per agent and identity stay few however the runs come: two labels, never a chat, and a pair past
the cap is counted as "other" instead of a new series."""

from __future__ import annotations

from bot.ops.agent_figures import MAX_PAIRS, OTHER
from bot.ops.metrics import Metrics


def test_figures_add_up_per_pair_and_the_series_stay_bounded() -> None:
    metrics = Metrics()
    figures = metrics.agents
    figures.run("helper", "support", 120, 0.5, False, 0.4)
    figures.run("helper", "support", 80, 0.25, True, None)  # failed before any text
    figures.run("default", "telegram", 10, 0.0, False, 1.2)
    (agent, identity, busiest), *_ = figures.rows()
    assert (agent, identity, busiest.answers, busiest.tokens, busiest.cost, busiest.errors) == \
        ("helper", "support", 2, 200, 0.75, 1)
    assert busiest.first_text_p50 == 0.4
    sample = metrics.registry.get_sample_value
    assert sample("bothub_agent_tokens_total", {"agent": "helper", "identity": "support"}) == 200
    assert sample("bothub_agent_errors_total", {"agent": "helper", "identity": "support"}) == 1
    for n in range(MAX_PAIRS + 50):
        figures.run(f"a{n}", "bot", 1, 0.0, False, None)
    assert len(figures.by_pair) == MAX_PAIRS + 1  # the cap, and "other" for the rest
    assert sample("bothub_agent_answers_total", {"agent": OTHER, "identity": OTHER}) == 52  # 2 + 198 pairs fit
    assert not any(s.labels.keys() - {"agent", "identity", "le"} for m in metrics.registry.collect()
                   if m.name.startswith("bothub_agent_") for s in m.samples)
