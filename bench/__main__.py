"""`make bench`: every benchmark in order → bench/results.md (store, hub, flat cost, store backends, concurrency,
scheduler, dashboard, footprint of a real `bothub run`, Telegram end to end, Discord pacing).

The soak test (bench/soak.py, if present) is long and runs on its own.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from bench import (
    concurrency,
    dashboard,
    discord_answers,
    flat,
    footprint,
    hub,
    scale,
    scheduler,
    store,
    telegram_e2e,
)
from bench.common import Section, print_section, render_markdown

RESULTS = Path(__file__).with_name("results.md")


async def main() -> None:
    sections: list[Section] = []
    for module in (store, hub, flat, scale, concurrency, scheduler, dashboard, footprint, telegram_e2e,
                   discord_answers):
        started = time.monotonic()
        section = await module.run()
        section.notes.append(f"took {time.monotonic() - started:.0f} s")
        print_section(section)
        sections.append(section)
    RESULTS.write_text(render_markdown(sections), encoding="utf-8")
    print(f"\nwritten to {RESULTS}")


if __name__ == "__main__":
    asyncio.run(main())
