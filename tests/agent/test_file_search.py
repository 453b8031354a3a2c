"""file_search: by name and by content inside the chat folder, never through a link, within its bounds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.agent.tools import file_search
from bot.agent.tools.registry import ToolContext
from tests.agent.test_files import tool


@pytest.fixture
def folder(ctx: ToolContext) -> Path:
    root = ctx.workdir
    (root / "uploads" / "2026-10").mkdir(parents=True)
    (root / "uploads" / "2026-10" / "invoice-octo.txt").write_text("Total: 42 EUR\nPaid by ACME\n", encoding="utf-8")
    (root / "uploads" / "report.md").write_text("# Q3\nrevenue grew\n", encoding="utf-8")
    (root / "notes.txt").write_text("call Alice about the ACME invoice\n会议纪要：预算\n", encoding="utf-8")
    (root / "photo.jpg").write_bytes(b"\xff\xd8\x00\x00ACME")  # binary: its bytes are not searched
    return root


async def test_finds_by_name_by_content_and_by_both(ctx: ToolContext, folder: Path) -> None:
    assert await tool(ctx, "file_search", glob="*.txt") == "notes.txt\nuploads/2026-10/invoice-octo.txt"
    assert await tool(ctx, "file_search", text="acme") == (
        "notes.txt:1: call Alice about the ACME invoice\nuploads/2026-10/invoice-octo.txt:2: Paid by ACME")
    assert await tool(ctx, "file_search", glob="uploads/*/*.txt", text="total") == \
        "uploads/2026-10/invoice-octo.txt:1: Total: 42 EUR"
    assert await tool(ctx, "file_search", text="预算") == "notes.txt:2: 会议纪要：预算"
    assert await tool(ctx, "file_search", text="revenue", dirpath="uploads") == "uploads/report.md:2: revenue grew"


async def test_no_match_and_bad_arguments_are_answered_politely(ctx: ToolContext, folder: Path) -> None:
    assert await tool(ctx, "file_search", text="nowhere") == "No match in . (4 files looked at)."
    assert (await tool(ctx, "file_search")).startswith("Error: give a name pattern")
    assert await tool(ctx, "file_search", text="x", dirpath="missing") == "Error: missing does not exist"
    assert await tool(ctx, "file_search", text="x", dirpath="notes.txt") == "Error: notes.txt is not a folder"
    assert await tool(ctx, "file_search", text="x", dirpath="../") == "Error: path is outside this chat's folder"
    assert await tool(ctx, "file_search", text=["x"]) == "Error: glob, text and dirpath must be strings"


async def test_links_are_never_followed(tmp_path: Path, ctx: ToolContext, folder: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("ACME password hunter2\n", encoding="utf-8")
    (folder / "linked-dir").symlink_to(outside)
    (folder / "linked.txt").symlink_to(outside / "secret.txt")
    os.link(outside / "secret.txt", folder / "hardlinked.txt")
    found = await tool(ctx, "file_search", text="ACME")
    assert "hunter2" not in found and "linked" not in found
    assert await tool(ctx, "file_search", text="x", dirpath="linked-dir") == "Error: path is outside this chat's folder"


async def test_bounds_stop_the_search_and_say_so(ctx: ToolContext, folder: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(30):
        (folder / f"log{n:02}.txt").write_text("ERROR disk full\n" * 3, encoding="utf-8")
    monkeypatch.setattr(file_search, "MAX_MATCHES", 4)
    found = (await tool(ctx, "file_search", text="error")).splitlines()
    assert found[:4] == ["log00.txt:1: ERROR disk full", "log00.txt:2: ERROR disk full",
                         "log00.txt:3: ERROR disk full", "log01.txt:1: ERROR disk full"]
    assert found[4] == "… first 4 matches shown; narrow the search to see others"
    monkeypatch.setattr(file_search, "MAX_MATCHES", 1000)
    monkeypatch.setattr(file_search, "MAX_FILES", 10)
    assert (await tool(ctx, "file_search", text="error")).endswith(
        "… stopped after 10 files; search a subfolder to go further")
    monkeypatch.setattr(file_search, "MAX_FILES", 1000)
    monkeypatch.setattr(file_search, "MAX_TOTAL_BYTES", 100)  # two 48-byte logs, then the budget is spent
    assert (await tool(ctx, "file_search", text="error")).splitlines()[-1].startswith("… stopped after reading")


async def test_a_long_matching_line_is_cut(ctx: ToolContext, folder: Path) -> None:
    (folder / "min.js").write_text("var a=1;" * 200 + "needle" + "x" * 500, encoding="utf-8")
    line = await tool(ctx, "file_search", text="needle")
    assert line.startswith("min.js:1: var a=1;") and line.endswith("…")
    assert len(line) == len("min.js:1: ") + file_search.MAX_LINE + 1
