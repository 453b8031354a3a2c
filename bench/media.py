"""What a 10 MB photo costs end to end: CPU seconds and peak RSS for fetch → save → resize → vision request.

The photo goes through the real app (hub, lane, intake, Pillow, the vision request to a fake LLM in
this process) from an in-memory platform, so the figure is bothub's own work, not a network's.
"""

from __future__ import annotations

import asyncio
import io
import os
import resource
import tempfile
import time
from pathlib import Path

import psutil
from PIL import Image

from bot.chats.sessions import SessionKey
from bot.messages import Attachment
from bot.ops import eventloop
from tests.fakes.openai_api import MODEL, FakeOpenAI, Text
from tests.harness import RecordingAdapter, running_app, wait_for

TARGET_BYTES = 10_000_000


def noisy_jpeg() -> bytes:
    """A photo-sized JPEG of noise (noise barely compresses, so ~10 MB)."""
    side = 2400
    while True:
        image = Image.frombytes("RGB", (side, side * 3 // 4), os.urandom(side * (side * 3 // 4) * 3))
        out = io.BytesIO()
        image.save(out, "JPEG", quality=92)
        if out.tell() >= TARGET_BYTES:
            return out.getvalue()
        side += 400


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def main() -> None:
    photo = noisy_jpeg()
    fake = FakeOpenAI(api_key="test-key")
    await fake.start()
    with tempfile.TemporaryDirectory() as tmp:
        rec = RecordingAdapter()
        config = {"llm": {"vision_models": [MODEL]}, "media": {"max_bytes": 30_000_000}}
        async with running_app(Path(tmp), fake.base_url, adapters=(rec,), config=config) as app:
            assert rec.files is not None
            rec.files.served["p"] = photo
            fake.script(Text("a noisy picture"))
            process = psutil.Process()
            rss_before = peak = process.memory_info().rss
            cpu_before, wall_before = cpu(), time.perf_counter()
            await rec.say("what is this?", attachments=(Attachment("image", "big.jpg", "image/jpeg", None, "p"),))
            done = asyncio.create_task(app.hub.idle())
            while not done.done():  # sample the resident set while the photo is worked on
                peak = max(peak, process.memory_info().rss)
                await asyncio.sleep(0.005)
            spent, wall = cpu() - cpu_before, time.perf_counter() - wall_before
        assert rec.texts() == ["a noisy picture"], rec.texts()
        stall = await other_chat_latency(Path(tmp) / "stall", fake)
    await fake.stop()
    print(stall)
    print(f"photo {len(photo) / 1e6:.1f} MB: CPU {spent * 1000:.0f} ms, wall {wall * 1000:.0f} ms, "
          f"RSS {rss_before / 1e6:.0f} MB before, {peak / 1e6:.0f} MB at the peak "
          f"(+{(peak - rss_before) / 1e6:.0f} MB)")


async def other_chat_latency(data: Path, fake: FakeOpenAI) -> str:
    """Chat B's answer time alone, then while chat A's 20 MB file is being taken (streamed, hashed, saved)."""
    rec = RecordingAdapter()
    await asyncio.to_thread(data.mkdir)
    async with running_app(data, fake.base_url, adapters=(rec,), config={"media": {"max_bytes": 30_000_000}}) as app:
        assert rec.files is not None
        rec.files.served["big"] = os.urandom(20_000_000)

        async def answer_time(chat: str) -> float:
            started = time.perf_counter()
            await rec.say("ping", chat_id=chat)
            await wait_for(lambda: "ping" in rec.texts(chat), within=30)
            return time.perf_counter() - started

        alone = [await answer_time(f"b{n}") for n in range(5)]
        await rec.say("", chat_id="a", attachments=(Attachment("file", "big.bin", "", None, "big"),))
        a = SessionKey("recording", "a")
        during, pending = [], True
        for n in range(5):  # only answers that finished while chat A was still taking its file count
            took = await answer_time(f"c{n}")
            if app.lanes.busy(a):
                during.append(took)
            else:
                pending = False
                break
        await app.hub.idle()
    shown = ", ".join(f"{1000 * t:.0f}" for t in during) or "none"
    return (f"chat B's answer: {1000 * sorted(alone)[2]:.0f} ms median alone; answers that finished while chat A's "
            f"20 MB file was being taken: {shown} ms{'' if pending else ' (then the file was done)'}")


if __name__ == "__main__":
    eventloop.run(main())
