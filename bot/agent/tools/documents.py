"""Files in and out of the chat: `read_document` pages through PDFs and text, `send_file` posts a file here."""

from __future__ import annotations

import asyncio
import io
import mimetypes
import os
from pathlib import Path, PurePosixPath

from bot.adapter import OutgoingFile
from bot.agent.tools.files import Refused, in_thread, kind, open_jailed, shown
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.media.sniff import HEAD_BYTES, sniff

PAGE_CHARS = 8000  # characters of extracted text per page of the tool's answer
MAX_PDF_PAGES = 2000


def _contents(workdir: Path, filepath: str) -> tuple[str, bytes]:
    """The file's name and bytes, opened the way the file tools open (no symlinks, no hard links, no pipes)."""
    if kind(workdir, filepath) is None:
        raise Refused(f"Error: no file {filepath!r} in this chat's folder")
    with os.fdopen(open_jailed(workdir, filepath, write=False), "rb") as handle:
        return PurePosixPath(shown(filepath)).name, handle.read()


def _document_text(data: bytes) -> str:
    if sniff(data[:HEAD_BYTES]) == "application/pdf":
        from pypdf import PdfReader  # imported on first use: it adds ~18 MB to every process that loads it
        from pypdf.errors import PdfReadError

        try:
            reader = PdfReader(io.BytesIO(data))
            pages = reader.pages[:MAX_PDF_PAGES]
            return "\n\n".join(f"[page {i + 1}]\n{page.extract_text() or ''}" for i, page in enumerate(pages))
        except PdfReadError as e:
            raise Refused(f"Error: the PDF cannot be read ({e})") from e
    if b"\x00" in data[:8192]:
        raise Refused("Error: this is a binary file, not a document I can read as text")
    return data.decode("utf-8", errors="replace")


def _read(workdir: Path, filepath: str, page: object) -> str:
    number = int(page) if isinstance(page, int | str) and str(page).isdigit() and int(page) >= 1 else 0
    if number == 0:
        raise Refused("Error: page must be a whole number from 1")
    text = _document_text(_contents(workdir, filepath)[1])
    pages = max(1, -(-len(text) // PAGE_CHARS))
    if number > pages:
        raise Refused(f"Error: {filepath} has {pages} page(s) of text")
    chunk = text[(number - 1) * PAGE_CHARS : number * PAGE_CHARS]
    more = f"\n\n[page {number} of {pages}; ask for page {number + 1} for more]" if number < pages else ""
    return f"{chunk}{more}"


async def read_document(ctx: ToolContext, filepath: str, page: int = 1) -> str:
    return await in_thread(_read, ctx.workdir, filepath, page)


def _outgoing(workdir: Path, filepath: str, caption: str) -> OutgoingFile:
    name, data = _contents(workdir, filepath)
    mime = sniff(data[:HEAD_BYTES]) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    return OutgoingFile(data, name, mime, caption)


async def send_file(ctx: ToolContext, filepath: str, caption: str = "") -> str:
    if ctx.send_file is None:
        return "Error: files cannot be sent in this chat"
    try:
        file = await asyncio.to_thread(_outgoing, ctx.workdir, filepath, str(caption))
    except Refused as e:
        return str(e)
    except OSError as e:
        return f"Error: {e.strerror or type(e).__name__}"
    return await ctx.send_file(file)


def register(registry: ToolRegistry) -> None:
    path = {"type": "string", "description": "Path relative to this chat's folder"}
    registry.register(
        "read_document",
        "Read a document from this chat's folder (PDF or text, e.g. a file the user sent under uploads/), "
        f"one page of about {PAGE_CHARS} characters at a time.",
        {"type": "object", "properties": {"filepath": path, "page": {"type": "integer", "minimum": 1}},
         "required": ["filepath"]},
        read_document,
    )
    registry.register(
        "send_file",
        "Send a file from this chat's folder to this chat (images as photos, anything else as a document).",
        {"type": "object", "properties": {"filepath": path, "caption": {"type": "string"}}, "required": ["filepath"]},
        send_file,
    )
