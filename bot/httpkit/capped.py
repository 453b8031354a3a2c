"""A download read in chunks and refused once it passes a cap: what a platform says a file weighs is not trusted."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp

from bot.adapter import SendFailed

CHUNK = 65_536


async def capped(stream: aiohttp.StreamReader, limit: int, too_big: str, chunk: int = CHUNK) -> AsyncIterator[bytes]:
    """The body's chunks; SendFailed(`too_big`) as soon as more than `limit` bytes came."""
    received = 0
    async for part in stream.iter_chunked(chunk):
        received += len(part)
        if received > limit:
            raise SendFailed(too_big)
        yield part
