"""Stored images back into the request as `image_url` parts, for models that can see.

The tree keeps only the file's name and hash; each request re-reads the images on its path (so /retry
and /goto show the model the same pictures). Reads run in a thread and are cached by hash, so a
chat full of pictures costs one read per image, not one per turn.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from pathlib import Path
from typing import Any

from bot.media.images import data_url
from bot.tree.model import Message

CACHED_IMAGES = 32


class ImageParts:
    def __init__(self, cached: int = CACHED_IMAGES) -> None:
        self._cache: OrderedDict[str, str] = OrderedDict()  # sha256 → data URL
        self._cached = cached

    async def apply(self, request: list[dict[str, Any]], sources: dict[int, Message], workdir: Path) -> None:
        """Give each request message that came from a message with images its image parts, in place."""
        for item in request:
            message = sources.get(id(item))
            if message is None:
                continue
            parts: list[dict[str, Any]] = [{"type": "text", "text": item["content"]}]
            for file in message.files:
                if file.kind == "image":
                    url = await self._url(workdir / file.path, file.mime, file.sha256)
                    if url is not None:
                        parts.append({"type": "image_url", "image_url": {"url": url}})
            item["content"] = parts

    async def _url(self, path: Path, mime: str, sha256: str) -> str | None:
        if (url := self._cache.get(sha256)) is not None:
            self._cache.move_to_end(sha256)
            return url
        try:
            url = await asyncio.to_thread(data_url, path, mime)
        except OSError:  # removed from the chat's folder since: the text still names it
            return None
        self._cache[sha256] = url
        while len(self._cache) > self._cached:
            self._cache.popitem(last=False)
        return url
