"""A PDF that is expensive to parse (issue 28, point 3): read in a bounded child process, only as far as the
page asked for, cached by hash; /stop kills the child at once and other chats keep being answered.

The PDFs are written here by hand. Their expensive pages share one content stream of 100 000 empty text
operations: a few kilobytes of file, about two seconds of pypdf CPU per page and no text at all.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from bot.agent.tools import default_registry
from bot.agent.tools.registry import ToolContext
from bot.media.pdf import PdfFailed, PdfLimits, PdfReader
from bot.messages import Attachment
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app
from tests.media.test_media_hub import chat_folder, pdf_file, send

WORDS = b"(" + b"revenue rose " * 800 + b") Tj"  # 10 400 characters of text on one page
EMPTY = b"() Tj " * 100_000  # costly to interpret, yields nothing


def pdf(streams: list[bytes], pages: list[int]) -> bytes:
    """A PDF whose page i shows content stream pages[i] (streams are shared between pages)."""
    fixed = [b"<< /Type /Catalog /Pages 2 0 R >>", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    first_stream = len(fixed) + 1
    bodies = [zlib.compress(b"BT /F1 9 Tf " + s + b" ET", 9) for s in streams]
    objects = fixed + [b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(b), b) for b in bodies]
    first_page = len(objects) + 1
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                b"/Contents %d 0 R >>" % (first_stream + s) for s in pages]
    kids = b" ".join(b"%d 0 R" % (first_page + i) for i in range(len(pages)))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(pages))
    return pdf_file(objects)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(chat="test:1", workdir=tmp_path / "chat")


async def read_page(ctx: ToolContext, filepath: str, page: int = 1) -> str:
    return await default_registry().execute("read_document", json.dumps({"filepath": filepath, "page": page}), ctx)


async def test_only_the_pages_asked_for_are_read_and_the_result_is_cached(ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "report.pdf").write_bytes(pdf([WORDS, EMPTY], [0, 1, 1, 1, 1, 1]))  # 10 s to read it all
    first = await read_page(ctx, "report.pdf")
    assert first.startswith("[page 1]\nrevenue rose revenue rose")
    assert first.endswith("\n\n[page 1; there is more: ask for page 2]")  # the total is not known: not read

    reader = PdfReader()
    data = (ctx.workdir / "report.pdf").read_bytes()
    text = await reader.text(data, 8001)
    assert (len(text.pages), text.total, reader.started) == (1, 6, 1)
    again = await reader.text(data, 8001)
    assert again.pages == text.pages and reader.started == 1  # by content hash: no second child


async def test_a_pdf_over_its_limits_is_stopped_with_a_clear_error() -> None:
    expensive = pdf([EMPTY], [0] * 5)
    with pytest.raises(PdfFailed, match="needs more than 1 s of CPU to read; it was stopped"):
        await PdfReader(PdfLimits(cpu_seconds=1)).text(expensive, 8001)
    small = PdfReader(PdfLimits(memory_bytes=100 * 2**20))
    assert (await small.text(pdf([WORDS], [0]), 8001)).complete  # an ordinary PDF fits in 100 MB
    heavy = pdf([(b"(" + b"a" * 20_000 + b") Tj 1 0 Td ") * 1500], [0])  # 30 MB of text in 33 KB
    with pytest.raises(PdfFailed, match="needs more than 100 MB to read; it was stopped"):
        await small.text(heavy, 8001)
    with pytest.raises(PdfFailed, match="the PDF cannot be read"):
        await PdfReader().text(b"%PDF-1.4\nnot really", 8001)


def extraction_children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if "bot.media.pdf" in " ".join(p.cmdline())]


async def wait_for(check: Callable[[], object], seconds: float = 30) -> None:
    """Poll: the child and the other chat's answer appear in their own time (generous bound, not a timing test)."""
    for _ in range(int(seconds * 20)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"condition not met within {seconds} s")


@pytest.mark.timeout(120)
async def test_stop_kills_the_reading_child_and_other_chats_are_answered(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await send(rec, app, "", (Attachment("file", "slow.pdf", "application/pdf", None, "h1"),
                                  pdf([EMPTY], [0] * 30)))  # a minute of CPU, no text
        saved = next((chat_folder(app) / "uploads").iterdir()).name
        fake.script(ToolCalls([("c1", "read_document", f'{{"filepath": "uploads/{saved}"}}')]), Text("hi, c2"))
        await rec.say("what does it say?")
        await wait_for(lambda: extraction_children())
        [child] = extraction_children()
        await rec.say("hello", chat_id="c2")
        await wait_for(lambda: rec.texts("c2") == ["hi, c2"])  # answered while c1's PDF is being read
        assert child.is_running()
        await rec.say("/stop")
        await wait_for(lambda: not child.is_running() or child.status() == psutil.STATUS_ZOMBIE, 10)
        await app.hub.idle()
        assert extraction_children() == []
