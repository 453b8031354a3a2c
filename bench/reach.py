"""The agent's reach (issue 34): what a `browse` call costs on this machine, and what a voice reply costs beyond
the speech request itself.

browse: the real sandboxed Chromium against a local page (allowed as tests allow hosts), the first call (which
starts the browser) and 20 warm calls — wall time, and the browser's resident memory (every process of its tree,
read from /proc). Voice: the pipeline around the speech endpoint — Markdown to spoken text, the Ogg pages read
for duration and waveform — with a speech function that answers at once, so only bothub's own work is timed;
then the same with a WAV answer, which adds ffmpeg's transcode.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import psutil
from aiohttp import web

from bench.common import Section, median, ms, percentile, run_standalone
from bot.agent.tools import browser
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.media.speech import voice_notes
from tests.fakes.openai_speech import tone
from tests.fakes.serve import serve_local

PAGE = "<title>Bench</title><main>" + "".join(f"<p>Paragraph {n} with some words.</p>" for n in range(200)) + \
       "<button>Next</button></main>"
ANSWER = "## Plan\n\n" + " ".join(f"Step {n}: do the **thing** and check [it](https://example.org/{n})."
                                 for n in range(40)) + "\n\n```python\nprint('x')\n```"
WARM_CALLS = 20


def browser_rss() -> int:
    """Proportional resident bytes (PSS: shared pages split among their users, so the sum is not inflated) of every
    Chromium process under this one, the bwrap sandbox's children included."""
    me = psutil.Process()
    return sum(p.memory_full_info().pss for p in me.children(recursive=True) if "chrom" in p.name().lower())


async def bench_browse(section: Section) -> None:
    app = web.Application()
    app.router.add_get("/", lambda _: web.Response(text=PAGE, content_type="text/html"))
    runner, port = await serve_local(app)
    tools = ToolRegistry()
    pool = browser.register(tools, ["localhost"], timeout=30.0, memory_bytes=1024 * 2**20, max_download=1 << 20)
    with tempfile.TemporaryDirectory() as folder:
        ctx = ToolContext(chat="bench:1", workdir=Path(folder), is_admin=True)
        arguments = json.dumps({"action": "open", "url": f"http://localhost:{port}/"})
        started = time.perf_counter()
        first = await tools.execute("browse", arguments, ctx)
        cold = time.perf_counter() - started
        assert "Paragraph 199" in first, first[:300]
        warm, peak = [], browser_rss()
        for _ in range(WARM_CALLS):
            started = time.perf_counter()
            await tools.execute("browse", arguments, ctx)
            warm.append(time.perf_counter() - started)
            peak = max(peak, browser_rss())
    await pool.close()
    await runner.cleanup()
    section.add("browse: first call (starts Chromium in bwrap)", ms(cold))
    section.add(f"browse: open + read, warm (median / p95 of {WARM_CALLS})",
                f"{ms(median(warm))} / {ms(percentile(warm, 95))}")
    section.add("browse: Chromium's memory, all its processes (peak PSS)", f"{peak / 2**20:.0f} MB")


async def bench_voice(section: Section) -> None:
    opus, wav = await tone(6.0, "ogg"), await tone(6.0, "wav")

    def instant(audio: bytes):  # type: ignore[no-untyped-def]
        async def speak(text: str) -> tuple[bytes, str]:
            return audio, ""

        return speak

    for label, audio in (("Opus from the provider", opus), ("WAV from the provider (ffmpeg transcodes)", wav)):
        times = []
        for _ in range(10):
            started = time.perf_counter()
            notes = await voice_notes(instant(audio), ANSWER)
            times.append(time.perf_counter() - started)
        assert notes
        section.add(f"voice reply overhead beyond the speech request: {label} (median of 10)", ms(median(times)))


async def run() -> Section:
    section = Section("The agent's reach: browse and voice replies")
    await bench_browse(section)
    await bench_voice(section)
    section.notes.append(f"a {len(ANSWER)}-character Markdown answer, 6 s of audio; the page has 200 paragraphs")
    return section


if __name__ == "__main__":
    run_standalone(run)
