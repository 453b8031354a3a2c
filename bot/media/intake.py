"""An attachment's bytes → a file in the chat's `uploads/`, checked on the way; nothing half-written is left.

Bytes are streamed to a hidden temporary file with a running size cap and hash, so a 20 MB download
costs 20 MB of disk and a chunk of memory; file operations and image work run in threads, so other
chats never wait for this one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import BinaryIO

from bot.media.images import BadImage, normalize
from bot.media.sniff import HEAD_BYTES, contradicts, sniff
from bot.messages import Attachment
from bot.tree.model import AttachedFile

UPLOADS = "uploads"
NAME_MAX = 80
_UNSAFE = re.compile(r"[^\w.\-]+")


@dataclass(frozen=True, slots=True)
class MediaLimits:
    max_bytes: int  # per file
    max_image_px: int  # long edge after resizing
    max_files: int  # per message


class MediaRefused(Exception):
    """A file we won't take; `reason` is an i18n key (`media_<reason>`), `values` fill its blanks."""

    def __init__(self, reason: str, **values: object) -> None:
        super().__init__(reason)
        self.reason = reason
        self.values = values


def safe_name(name: str, fallback: str) -> str:
    """A file name that is one harmless path component: no separators, no leading dots, bounded length."""
    stem = _UNSAFE.sub("_", Path(name.replace("\\", "/")).name).strip("._") or fallback
    if len(stem) > NAME_MAX:
        root, dot, ext = stem.rpartition(".")
        stem = (root[: NAME_MAX - len(ext) - 1] + dot + ext) if dot and len(ext) <= 10 else stem[:NAME_MAX]
    return stem


async def save(chunks: AsyncIterator[bytes], workdir: Path, attachment: Attachment, limits: MediaLimits,
               today: date) -> AttachedFile:
    """Stream, cap, hash and check one attachment; returns where it now lives in the chat's folder."""
    if attachment.size is not None and attachment.size > limits.max_bytes:
        raise MediaRefused("too_big", name=attachment.name, limit=_megabytes(limits.max_bytes))
    folder = workdir / UPLOADS
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    temp = folder / f".incoming-{secrets.token_hex(6)}"
    try:
        size, digest, head = await _receive(chunks, temp, limits.max_bytes, attachment.name)
        if size == 0:
            raise MediaRefused("empty", name=attachment.name)
        mime = attachment.mime or sniff(head) or "application/octet-stream"
        if contradicts(mime, head):
            raise MediaRefused("mismatch", name=attachment.name, mime=mime)
        kind = attachment.kind
        if kind == "image":
            try:
                mime = await asyncio.to_thread(normalize, temp, limits.max_image_px)
            except BadImage as e:
                raise MediaRefused("bad_image", name=attachment.name) from e
            digest = await asyncio.to_thread(_sha256, temp)  # of what is kept, not what arrived
        final = await asyncio.to_thread(_place, temp, folder, today, safe_name(attachment.name, kind))
    except BaseException:
        with contextlib.suppress(OSError):
            await asyncio.to_thread(temp.unlink, missing_ok=True)
        raise
    stored_size = (await asyncio.to_thread(final.stat)).st_size
    return AttachedFile(kind=kind, mime=mime, size=stored_size, sha256=digest,
                        path=f"{UPLOADS}/{final.name}", name=attachment.name or final.name)


async def _receive(chunks: AsyncIterator[bytes], temp: Path, max_bytes: int, name: str) -> tuple[int, str, bytes]:
    size, head, hasher = 0, b"", hashlib.sha256()
    handle: BinaryIO = await asyncio.to_thread(open, temp, "xb")
    try:
        async for chunk in chunks:
            size += len(chunk)
            if size > max_bytes:
                raise MediaRefused("too_big", name=name, limit=_megabytes(max_bytes))
            if len(head) < HEAD_BYTES:
                head += chunk[: HEAD_BYTES - len(head)]
            hasher.update(chunk)
            await asyncio.to_thread(handle.write, chunk)
    finally:
        await asyncio.to_thread(handle.close)
    return size, hasher.hexdigest(), head


def _place(temp: Path, folder: Path, today: date, name: str) -> Path:
    """Move the finished file to `<date>-<name>`, adding -1, -2… rather than overwriting anything."""
    root, dot, ext = name.rpartition(".")
    if not dot:
        root, ext = name, ""
    for n in range(1000):
        candidate = folder / f"{today.isoformat()}-{root}{f'-{n}' if n else ''}{'.' + ext if ext else ''}"
        try:
            os.close(os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))  # claim the name
        except FileExistsError:
            continue
        os.replace(temp, candidate)
        return candidate
    raise MediaRefused("too_many", count=1000)


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:g} MB"
