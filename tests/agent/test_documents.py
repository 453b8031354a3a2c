"""read_document on text files (paged, with a footer that says what follows) and send_file, through the registry
as the model calls them: refusals are short errors, never exceptions."""

from __future__ import annotations

import dataclasses
import json
import os

from bot.adapter import OutgoingFile
from bot.agent.tools import default_registry
from bot.agent.tools.documents import PAGE_CHARS
from bot.agent.tools.registry import ToolContext


async def tool(ctx: ToolContext, name: str, **arguments: object) -> str:
    return await default_registry().execute(name, json.dumps(arguments), ctx)


async def test_a_text_document_is_read_page_by_page(ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    text = "".join(f"{n:07d}\n" for n in range(PAGE_CHARS * 2 // 8 + 10))  # two pages and a bit
    (ctx.workdir / "notes.txt").write_text(text, encoding="utf-8")
    first = await tool(ctx, "read_document", filepath="notes.txt")
    assert first == text[:PAGE_CHARS] + "\n\n[page 1 of 3; ask for page 2 for more]"
    assert await tool(ctx, "read_document", filepath="notes.txt", page="2") == (
        text[PAGE_CHARS:2 * PAGE_CHARS] + "\n\n[page 2 of 3; ask for page 3 for more]")
    assert await tool(ctx, "read_document", filepath="notes.txt", page=3) == text[2 * PAGE_CHARS:]  # the last
    assert await tool(ctx, "read_document", filepath="notes.txt", page=4) == "Error: notes.txt has 3 page(s) of text"
    for page in (0, -1, "two", 1.5):
        assert await tool(ctx, "read_document", filepath="notes.txt", page=page) == (
            "Error: page must be a whole number from 1")


async def test_binary_broken_and_missing_documents_are_refused(ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "blob.bin").write_bytes(b"\x7fELF\x00\x00" + os.urandom(64))
    (ctx.workdir / "broken.pdf").write_bytes(b"%PDF-1.7\n" + b"garbage " * 64)
    assert await tool(ctx, "read_document", filepath="blob.bin") == (
        "Error: this is a binary file, not a document I can read as text")
    broken = await tool(ctx, "read_document", filepath="broken.pdf")
    assert broken.startswith("Error: the PDF cannot be read (") and "garbage" not in broken
    assert await tool(ctx, "read_document", filepath="gone.txt") == "Error: no file 'gone.txt' in this chat's folder"


async def test_send_file_posts_the_file_with_its_type_or_says_why_not(ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    (ctx.workdir / "notes.md").write_text("# notes", encoding="utf-8")
    assert await tool(ctx, "send_file", filepath="chart.png") == "Error: files cannot be sent in this chat"
    sent: list[OutgoingFile] = []

    async def send(file: OutgoingFile) -> str:
        sent.append(file)
        return f"Sent {file.name}"

    ctx = dataclasses.replace(ctx, send_file=send)
    assert await tool(ctx, "send_file", filepath="chart.png", caption="this week") == "Sent chart.png"
    assert await tool(ctx, "send_file", filepath="notes.md") == "Sent notes.md"
    assert [(f.name, f.mime, f.caption) for f in sent] == [("chart.png", "image/png", "this week"),
                                                           ("notes.md", "text/markdown", "")]
    assert sent[0].data.startswith(b"\x89PNG")
    assert await tool(ctx, "send_file", filepath="../etc/passwd") == "Error: path is outside this chat's folder"
    assert len(sent) == 2
