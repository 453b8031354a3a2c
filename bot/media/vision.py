"""Stored images back into the request as `image_url` parts, for models that can see.

The tree keeps only the file's name and hash; each request re-reads the images on its path (so /retry
and /goto show the model the same pictures). Reads run in a thread and are cached by hash, so a
chat full of pictures costs one read per image, not one per turn. A command in the sandbox may have
replaced a stored picture with a link or another file: the read goes through bot/jail.py (no links,
no hard links) and the bytes must still have the hash the tree recorded, or the picture is left out.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from pathlib import Path
from typing import Any

from bot import jail
from bot.media.images import data_url
from bot.tree.model import AttachedFile, Message

log = logging.getLogger("bothub.media")
CACHED_IMAGES = 32
MAX_IMAGE_BYTES = 20 * 1024 * 1024  # far above what intake keeps after re-encoding


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
                    url = await self._url(workdir, file)
                    if url is not None:
                        parts.append({"type": "image_url", "image_url": {"url": url}})
            item["content"] = parts

    async def _url(self, workdir: Path, file: AttachedFile) -> str | None:
        if (url := self._cache.get(file.sha256)) is not None:
            self._cache.move_to_end(file.sha256)
            return url
        try:
            data = await asyncio.to_thread(jail.read_bytes, workdir, file.path, MAX_IMAGE_BYTES)
        except (OSError, jail.Jailed) as e:  # removed or replaced since: the text still names it
            log.info("image %s not shown to the model: %s", file.path, e)
            return None
        if hashlib.sha256(data).hexdigest() != file.sha256:
            log.warning("image %s not shown to the model: its bytes changed since it was received", file.path)
            return None
        self._cache[file.sha256] = url = data_url(data, file.mime)
        while len(self._cache) > self._cached:
            self._cache.popitem(last=False)
        return url
