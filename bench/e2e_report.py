"""One platform's end-to-end table: every load × first-token delay, each bot run once, side by side.

Targets (performance round three) are checked on bothub's column: all answered, 0 lost/duplicated/out of order,
≤ 1 % 429s; and under the steady load of short answers: first visible text p50 ≤ first token + 30 ms, the complete
answer's p99 ≤ the (non-streaming) baseline's + 300 ms, CPU per answer ≤ 1.2 × the baseline bot's, ≤ 2 platform
calls per answer.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from bench.common import Section, median, percentile
from bench.e2e import SETTLE, Bot, Load, Outcome, Rig, measure

FIRST_TOKENS = (0.0, 0.2)
CPU_RATIO = 1.2
COMPLETE_MARGIN = 0.300  # seconds a streamed complete answer's p99 may exceed the non-streaming baseline's


def _load_avg() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


async def run_platform(title: str, make_rig: Callable[[], Rig], bots: list[Bot], steady: Load,
                       pressing: Load) -> Section:
    """Steady load at each first-token delay, then the pressing load at 200 ms; every bot once per pair."""
    sec = Section(title, columns=tuple(b.label for b in bots))
    sec.notes.append(f"load average at the start {_load_avg()}")
    for load, first_token in [*((steady, ft) for ft in FIRST_TOKENS), (pressing, FIRST_TOKENS[-1])]:
        outcomes = [await measure(make_rig, bot, load, first_token) for bot in bots]
        _rows(sec, f"{load.name.split(':')[0]}, first token {first_token * 1000:.0f} ms", outcomes, first_token)
    sec.notes += [
        f"Loads: {steady.name}; {pressing.name}.",
        "Each figure is one run of each bot (the columns), all from this one run of the benchmark, one bot at a "
        "time on a fresh fake; latencies are measured in the fake from injection to a landed call; lost: not "
        f"answered within {SETTLE:g} s of the last question.",
        f"Fake LLM in its own process: echoes the question one word per chunk, words 50 ms apart. Targets apply to "
        f"bothub; CPU per answer is compared with the first baseline (≤ {CPU_RATIO:g} ×).",
        f"load average at the end {_load_avg()}",
    ]
    return sec


def _cells(outcomes: list[Outcome], cell: Callable[[Outcome], str]) -> str:
    return " | ".join(cell(o) for o in outcomes)


def _pcts(values: list[float], scale: float, fmt: str) -> str:
    return " / ".join(f"{percentile(values, p) * scale:{fmt}}" for p in (50, 95, 99))


def _rows(sec: Section, label: str, outs: list[Outcome], first_token: float) -> None:
    ours, base = outs[0], outs[1]
    steady = ours.load.short
    sec.add(f"{label}: answered", _cells(outs, lambda o: f"{o.answered} / {o.asked}"), "all",
            ours.answered == ours.asked)
    bad = ours.lost + ours.duplicated + ours.out_of_order + ours.merged
    sec.add(f"{label}: lost / duplicated / out of order / merged",
            _cells(outs, lambda o: f"{o.lost} / {o.duplicated} / {o.out_of_order} / {o.merged}"), "0", bad == 0)
    sec.add(f"{label}: throughput", _cells(outs, lambda o: f"{o.throughput():.1f} msg/s"))
    firsts = list(ours.first.values())
    sec.add(f"{label}: first visible text p50 / p95 / p99",
            _cells(outs, lambda o: _pcts(list(o.first.values()), 1000, ".0f") + " ms"))
    if steady:
        p50, limit50 = median(firsts), first_token + 0.030
        sec.add(f"{label}: first visible text p50 (bothub)", f"{p50 * 1000:.0f} ms" + " | " * (len(outs) - 1),
                f"≤ {limit50 * 1000:.0f} ms", p50 <= limit50)
    sec.add(f"{label}: complete answer p50 / p95 / p99",
            _cells(outs, lambda o: _pcts(list(o.complete.values()), 1, ".2f") + " s"))
    if steady:
        p99, limit99 = percentile(list(ours.complete.values()), 99), percentile(list(base.complete.values()), 99)
        limit99 += COMPLETE_MARGIN
        sec.add(f"{label}: complete answer p99 (bothub)", f"{p99:.2f} s" + " | " * (len(outs) - 1),
                f"≤ {limit99:.2f} s (baseline's + {COMPLETE_MARGIN * 1000:.0f} ms)", p99 <= limit99)
    share = ours.calls.too_many / max(ours.calls.total, 1) * 100
    sec.add(f"{label}: platform calls / 429s / other 4xx",
            _cells(outs, lambda o: f"{o.calls.total} / {o.calls.too_many} "
                                   f"({o.calls.too_many / max(o.calls.total, 1) * 100:.1f} %) / {o.calls.other_4xx}"),
            "429 ≤ 1 %", share <= 1)
    if any(o.causes for o in outs):
        sec.add(f"{label}: 429s by rule",
                _cells(outs, lambda o: ", ".join(f"{k} {v}" for k, v in sorted(o.causes.items())) or "none"))
    per_answer = ours.calls.total / max(ours.answered, 1)
    sec.add(f"{label}: platform calls per answer", _cells(outs, lambda o: f"{o.calls.total / max(o.answered, 1):.2f}"),
            "≤ 2" if steady else "", per_answer <= 2 if steady else None)
    sec.add(f"{label}: CPU per answer / per platform call",
            _cells(outs, lambda o: f"{o.cpu / max(o.answered, 1) * 1000:.1f} / "
                                   f"{o.cpu / max(o.calls.total, 1) * 1000:.1f} ms"))
    def cpu_per_answer(o: Outcome) -> float:
        return o.cpu / max(o.answered, 1)

    ratio = cpu_per_answer(ours) / max(cpu_per_answer(base), 1e-9)
    sec.add(f"{label}: bothub's CPU per answer ÷ this bot's",
            _cells(outs, lambda o: f"{cpu_per_answer(ours) / max(cpu_per_answer(o), 1e-9):.2f} ×"),
            f"≤ {CPU_RATIO:g} × (first baseline)" if steady else "", ratio <= CPU_RATIO if steady else None)
    sec.add(f"{label}: peak RSS", _cells(outs, lambda o: f"{o.peak_rss / 2**20:.0f} MB"))
