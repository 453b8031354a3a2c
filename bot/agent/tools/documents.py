"""Files in and out of the chat: `read_document` pages through PDFs and text, `send_file` posts a file here.

PDFs are read by bot/media/pdf.py in a bounded child process, only as far as the page asked for; text
files are decoded in a thread. A "page" is PAGE_CHARS characters of the text, PDF page marks included.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
from pathlib import Path, PurePosixPath

from bot.adapter import OutgoingFile
from bot.agent.tools.files import Refused, answered, kind, open_jailed, shown
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.media.pdf import PdfFailed, PdfReader
from bot.media.sniff import HEAD_BYTES, sniff

PAGE_CHARS = 8000  # characters of extracted text per page of the tool's answer


def contents(workdir: Path, filepath: str) -> tuple[str, bytes]:
    """The file's name and bytes, opened the way the file tools open (no symlinks, no hard links, no pipes)."""
    if kind(workdir, filepath) is None:
        raise Refused(f"Error: no file {filepath!r} in this chat's folder")
    with os.fdopen(open_jailed(workdir, filepath, write=False), "rb") as handle:
        return PurePosixPath(shown(filepath)).name, handle.read()


def _plain_text(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise Refused("Error: this is a binary file, not a document I can read as text")
    return data.decode("utf-8", errors="replace")


def _page_number(page: object) -> int:
    if isinstance(page, int | str) and str(page).isdigit() and int(page) >= 1:
        return int(page)
    raise Refused("Error: page must be a whole number from 1")


def _page(text: str, number: int, complete: bool, filepath: str) -> str:
    """Page `number` of `text`, with a footer; the total is only named once the whole text is known."""
    pages = max(1, -(-len(text) // PAGE_CHARS))
    if number > pages:
        raise Refused(f"Error: {filepath} has {pages} page(s) of text")
    chunk = text[(number - 1) * PAGE_CHARS : number * PAGE_CHARS]
    if not complete:
        return f"{chunk}\n\n[page {number}; there is more: ask for page {number + 1}]"
    more = f"\n\n[page {number} of {pages}; ask for page {number + 1} for more]" if number < pages else ""
    return f"{chunk}{more}"


async def _read(reader: PdfReader, ctx: ToolContext, filepath: str, page: object) -> str:
    number = _page_number(page)
    data = (await asyncio.to_thread(contents, ctx.workdir, filepath))[1]
    if sniff(data[:HEAD_BYTES]) != "application/pdf":
        return _page(await asyncio.to_thread(_plain_text, data), number, True, filepath)
    try:
        pdf = await reader.text(data, number * PAGE_CHARS + 1)  # one more: is there a next page?
    except PdfFailed as e:
        raise Refused(f"Error: {e}") from None
    return _page(pdf.text, number, pdf.complete, filepath)


def _outgoing(workdir: Path, filepath: str, caption: str) -> OutgoingFile:
    name, data = contents(workdir, filepath)
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


def register(registry: ToolRegistry, reader: PdfReader | None = None) -> None:
    """`reader` bounds PDF work for everything this registry runs: one set of children for all chats."""
    pdfs = reader or PdfReader()

    async def read_document(ctx: ToolContext, filepath: str, page: int = 1) -> str:
        return await answered(_read(pdfs, ctx, filepath, page))

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
