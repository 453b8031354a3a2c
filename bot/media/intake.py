"""An attachment's bytes → a file in the chat's `uploads/`, checked on the way; nothing half-written is left.

Bytes are streamed to a hidden temporary file with a running size cap and hash, so a 20 MB download
costs 20 MB of disk and a chunk of memory; file operations and image work run in threads, so other
chats never wait for this one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import os
import re
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import BinaryIO

from bot import jail
from bot.media.images import BadImage, normalize
from bot.media.sniff import HEAD_BYTES, contradicts, sniff
from bot.messages import Attachment
from bot.tree.model import UPLOADS, AttachedFile

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
    """Stream, cap, hash and check one attachment; returns where it now lives in the chat's folder.

    `uploads/` is reached through bot/jail.py: a command may have swapped it for a link to elsewhere,
    and then the file is refused rather than written through it.
    """
    if attachment.size is not None and attachment.size > limits.max_bytes:
        raise MediaRefused("too_big", name=attachment.name, limit=_megabytes(limits.max_bytes))
    try:
        folder = await asyncio.to_thread(jail.open_dir, workdir, UPLOADS, True)
    except jail.Jailed:
        raise MediaRefused("folder", name=attachment.name or attachment.kind) from None
    try:
        return await _save_in(folder, chunks, attachment, limits, today)
    finally:
        os.close(folder)


async def _save_in(folder: int, chunks: AsyncIterator[bytes], attachment: Attachment, limits: MediaLimits,
                   today: date) -> AttachedFile:
    temp = f".incoming-{secrets.token_hex(6)}"
    flags = os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
    handle = os.fdopen(await asyncio.to_thread(os.open, temp, flags, 0o600, dir_fd=folder), "w+b")
    try:
        with handle:
            mime, digest = await _receive_checked(chunks, handle, attachment, limits)
            handle.flush()
            stored_size = os.fstat(handle.fileno()).st_size
        final = await asyncio.to_thread(_place, folder, temp, today, safe_name(attachment.name, attachment.kind))
    except BaseException:
        with contextlib.suppress(OSError):
            await asyncio.to_thread(os.unlink, temp, dir_fd=folder)
        raise
    return AttachedFile(kind=attachment.kind, mime=mime, size=stored_size, sha256=digest,
                        path=f"{UPLOADS}/{final}", name=attachment.name or final)


async def _receive_checked(chunks: AsyncIterator[bytes], handle: io.BufferedRandom, attachment: Attachment,
                           limits: MediaLimits) -> tuple[str, str]:
    """The file's MIME type and SHA-256 once it is in `handle`, size-capped, sniffed and (images) re-encoded."""
    size, digest, head = await _receive(chunks, handle, limits.max_bytes, attachment.name)
    if size == 0:
        raise MediaRefused("empty", name=attachment.name)
    mime = attachment.mime or sniff(head) or "application/octet-stream"
    if contradicts(mime, head):
        raise MediaRefused("mismatch", name=attachment.name, mime=mime)
    if attachment.kind == "image":
        try:
            mime = await asyncio.to_thread(normalize, handle, limits.max_image_px)
        except BadImage as e:
            raise MediaRefused("bad_image", name=attachment.name) from e
        digest = await asyncio.to_thread(_sha256, handle)  # of what is kept, not what arrived
    return mime, digest


async def _receive(chunks: AsyncIterator[bytes], handle: BinaryIO, max_bytes: int, name: str) -> tuple[int, str, bytes]:
    size, head, hasher = 0, b"", hashlib.sha256()
    async for chunk in chunks:
        size += len(chunk)
        if size > max_bytes:
            raise MediaRefused("too_big", name=name, limit=_megabytes(max_bytes))
        if len(head) < HEAD_BYTES:
            head += chunk[: HEAD_BYTES - len(head)]
        hasher.update(chunk)
        await asyncio.to_thread(handle.write, chunk)
    return size, hasher.hexdigest(), head


def _place(folder: int, temp: str, today: date, name: str) -> str:
    """Move the finished file to `<date>-<name>`, adding -1, -2… rather than overwriting anything."""
    root, dot, ext = name.rpartition(".")
    if not dot:
        root, ext = name, ""
    for n in range(1000):
        candidate = f"{today.isoformat()}-{root}{f'-{n}' if n else ''}{'.' + ext if ext else ''}"
        try:  # claim the name; O_EXCL never follows a link planted under it
            os.close(os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600, dir_fd=folder))
        except FileExistsError:
            continue
        os.replace(temp, candidate, src_dir_fd=folder, dst_dir_fd=folder)
        return candidate
    raise MediaRefused("too_many", count=1000)


def _sha256(handle: io.BufferedRandom) -> str:
    handle.seek(0)
    return hashlib.file_digest(handle, "sha256").hexdigest()


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:g} MB"
