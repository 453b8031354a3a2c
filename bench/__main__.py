"""`make bench`: every benchmark in order → bench/results.md (store, hub, HTTP API, flat cost, store backends,
run traces, group context, concurrency, scheduler, background tasks, dashboard, /search, recall by meaning,
footprint of a real `bothub run`, Telegram, Discord and Feishu end to end, Discord pacing), each in a fresh
interpreter.

The soak test (bench/soak.py, if present) is long and runs on its own.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.common import Section, print_section, render_markdown, section_from_json

RESULTS = Path(__file__).with_name("results.md")
MODULES = ("store", "hub", "api", "flat", "scale", "traces", "group_context", "concurrency", "scheduler", "tasks",
           "dashboard", "search", "memory_recall", "footprint", "telegram_e2e", "discord_e2e", "feishu_e2e",
           "dingtalk_e2e", "slack_e2e", "wecom_e2e", "discord_answers", "reach")


async def measure(name: str) -> Section:
    """One benchmark in its own interpreter: no figure carries an earlier benchmark's heap, threads or GC debt."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "section.json"
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", f"bench.{name}", "--json", str(out))
        status = await proc.wait()
        if status != 0 or not out.exists():  # one benchmark failing (a loaded machine, a missing server) keeps the rest
            return Section(f"{name}: failed", notes=[f"exit status {status}; its traceback is in the output above"])
        return section_from_json(out.read_text(encoding="utf-8"))


async def _commit() -> str:
    proc = await asyncio.create_subprocess_exec("git", "rev-parse", "--short", "HEAD", stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL)
    out, _ = await proc.communicate()
    return f" on commit {out.decode().strip()}" if proc.returncode == 0 else ""


async def main() -> None:
    sections: list[Section] = []
    run = (f"Every figure below comes from one `make bench` started {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
           f"{await _commit()}, each benchmark in a fresh interpreter, one pass unless a row or note says more.")
    for name in MODULES:
        started = time.monotonic()
        section = await measure(name)
        section.notes.append(f"took {time.monotonic() - started:.0f} s")
        print_section(section)
        sections.append(section)
    RESULTS.write_text(render_markdown(sections, run), encoding="utf-8")
    print(f"\nwritten to {RESULTS}")


if __name__ == "__main__":
    asyncio.run(main())
