"""`make bench`: every benchmark in order → bench/results.md (store, hub, HTTP API, flat cost, store backends,
run traces, group context, concurrency, scheduler, dashboard, /search, footprint of a real `bothub run`, Telegram,
Discord and Feishu end to end, Discord pacing).

The soak test (bench/soak.py, if present) is long and runs on its own.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from bench import (
    api,
    concurrency,
    dashboard,
    discord_answers,
    discord_e2e,
    feishu_e2e,
    flat,
    footprint,
    group_context,
    hub,
    scale,
    scheduler,
    search,
    store,
    telegram_e2e,
    traces,
)
from bench.common import Section, print_section, render_markdown

RESULTS = Path(__file__).with_name("results.md")


async def main() -> None:
    sections: list[Section] = []
    modules = (store, hub, api, flat, scale, traces, group_context, concurrency, scheduler, dashboard, search,
               footprint, telegram_e2e, discord_e2e, feishu_e2e, discord_answers)
    for module in modules:
        started = time.monotonic()
        try:
            section = await module.run()
        except Exception as e:  # one benchmark failing (a loaded machine, a missing server) keeps the others
            section = Section(f"{module.__name__}: failed", notes=[f"{type(e).__name__}: {e}"])
        section.notes.append(f"took {time.monotonic() - started:.0f} s")
        print_section(section)
        sections.append(section)
    RESULTS.write_text(render_markdown(sections), encoding="utf-8")
    print(f"\nwritten to {RESULTS}")


if __name__ == "__main__":
    asyncio.run(main())
