"""Shared pieces of the benchmarks: result rows with targets, percentiles, the fake LLM subprocess, tables."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import statistics
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bot.ops import eventloop


@dataclass
class Row:
    """One measured figure; `met` is None when the figure has no target (context only)."""

    name: str
    value: str
    target: str = ""
    met: bool | None = None


@dataclass
class Section:
    """A table; with several `columns` (bots side by side) each row's value holds one cell per column, " | "-joined."""

    title: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    columns: tuple[str, ...] = ("value",)

    def add(self, name: str, value: str, target: str = "", met: bool | None = None) -> None:
        self.rows.append(Row(name, value, target, met))

    def check(self, name: str, value: float, limit: float, unit: str, *, fmt: str = ".1f",
              at_most: bool = True) -> None:
        """A figure with a numeric target: `value ≤ limit` (or ≥ when at_most is False)."""
        met = value <= limit if at_most else value >= limit
        self.add(name, f"{value:{fmt}} {unit}".strip(), f"{'≤' if at_most else '≥'} {limit:g} {unit}".strip(), met)


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} cores ({platform.processor() or platform.machine()}), "
            f"Python {platform.python_version()} on {platform.system()} {platform.release()}; "
            f"load average at the end {load}")


def _status(met: bool | None) -> str:
    return "" if met is None else ("met" if met else "NOT MET")


def render_markdown(sections: Sequence[Section], run: str = "") -> str:
    out = ["# bothub benchmark results", "", f"Machine: {machine()}", *(["", run] if run else []), ""]
    for sec in sections:
        head = ["figure", *sec.columns, "target", "status"]
        out += [f"## {sec.title}", "", f"| {' | '.join(head)} |", "|" + " --- |" * len(head)]
        out += [f"| {r.name} | {r.value} | {r.target} | {_status(r.met)} |" for r in sec.rows]
        if sec.notes:
            out.append("")
            out += [f"- {n}" for n in sec.notes]
        out.append("")
    return "\n".join(out)


def print_section(sec: Section) -> None:
    width = max([len(r.name) for r in sec.rows] + [10])
    vwidth = max([len(r.value) for r in sec.rows] + [5])
    print(f"\n== {sec.title}")
    if len(sec.columns) > 1:
        print(f"  {'':<{width}}  {' | '.join(sec.columns)}")
    for r in sec.rows:
        target = f"  (target {r.target}: {_status(r.met)})" if r.target else ""
        print(f"  {r.name:<{width}}  {r.value:>{vwidth}}{target}")
    for n in sec.notes:
        print(f"  * {n}")
    sys.stdout.flush()


@contextlib.asynccontextmanager
async def fake_llm(words_delay: float = 0.0, first_token_delay: float = 0.0) -> AsyncIterator[str]:
    """The echoing fake OpenAI server in its own process (its CPU is not ours); yields its base_url."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.openai_api", "--port", "0",
        "--words-delay", str(words_delay), "--first-token-delay", str(first_token_delay),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        if not line:
            raise RuntimeError("the fake LLM did not start")
        yield line.decode().strip()
    finally:
        await end_process(proc, 5)


async def end_process(proc: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM, then SIGKILL if it is still there after `grace` seconds."""
    if proc.returncode is None:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), grace)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def run_standalone(coro_fn: object) -> None:
    """`python -m bench.<name>`: run one benchmark and print its section; with `--json FILE` (how `make bench`
    runs each benchmark in a fresh interpreter) the section is written to FILE instead."""
    section = eventloop.run(coro_fn())  # type: ignore[operator]
    if sys.argv[1:2] == ["--json"]:
        Path(sys.argv[2]).write_text(json.dumps(asdict(section)), encoding="utf-8")
    else:
        print_section(section)


def section_from_json(text: str) -> Section:
    data = json.loads(text)
    return Section(data["title"], [Row(**row) for row in data["rows"]], data["notes"], tuple(data["columns"]))
