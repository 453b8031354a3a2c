"""Server-sent events: one queue of frames per open browser tab, written until the queue says stop (None)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

KEEPALIVE = 15.0  # seconds between comment frames, so proxies keep an idle stream open
QUEUE_LIMIT = 1000  # frames a stalled tab may fall behind before it is dropped (it reconnects and resyncs)


def frame(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def offer(queue: asyncio.Queue[str | None], text: str) -> bool:
    """Queue a frame; a full queue is emptied and told to stop instead (False)."""
    try:
        queue.put_nowait(text)
        return True
    except asyncio.QueueFull:
        end(queue)
        return False


def end(queue: asyncio.Queue[str | None]) -> None:
    while not queue.empty():
        queue.get_nowait()
    queue.put_nowait(None)


def finish(queue: asyncio.Queue[str | None]) -> None:
    """Stop once the frames already queued are sent (at once, if there is no room left)."""
    try:
        queue.put_nowait(None)
    except asyncio.QueueFull:
        end(queue)


async def serve(request: web.Request, queue: asyncio.Queue[str | None]) -> web.StreamResponse:
    """Stream the queue's frames to the browser until None arrives or the tab goes away."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store",
                                           "X-Content-Type-Options": "nosniff"})
    await response.prepare(request)
    try:
        await response.write(b": open\n\n")
        while True:
            try:
                text = await asyncio.wait_for(queue.get(), KEEPALIVE)
            except TimeoutError:
                await response.write(b": keepalive\n\n")
                continue
            if text is None:
                break
            await response.write(text.encode())
    except ConnectionResetError:
        pass  # the tab went away
    return response
