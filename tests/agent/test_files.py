"""File tools through the registry, as the model reaches them: jail, navigation footer, big-folder summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.agent.tools import default_registry
from bot.agent.tools.files import OUTSIDE
from bot.agent.tools.registry import MAX_TOOL_OUTPUT, ToolContext


async def tool(ctx: ToolContext, name: str, **arguments: object) -> str:
    return await default_registry().execute(name, json.dumps(arguments), ctx)


@pytest.fixture
def outside(tmp_path: Path, ctx: ToolContext) -> Path:
    """A secret next to the chat folder, plus symlinks inside the folder that point at it."""
    secret_dir = tmp_path / "outside"
    secret_dir.mkdir()
    (secret_dir / "secret.txt").write_text("top secret", encoding="utf-8")
    ctx.workdir.mkdir()
    (ctx.workdir / "link.txt").symlink_to(secret_dir / "secret.txt")
    (ctx.workdir / "linkdir").symlink_to(secret_dir)
    return secret_dir


@pytest.mark.parametrize("path", [
    "../outside/secret.txt", "/etc/passwd", "a/../../outside/secret.txt", "link.txt", "linkdir/secret.txt",
])
async def test_paths_leading_out_are_refused(ctx: ToolContext, outside: Path, path: str) -> None:
    assert await tool(ctx, "read_file", filepath=path) == OUTSIDE
    assert await tool(ctx, "write_file", filepath=path, content="pwned") == OUTSIDE
    assert await tool(ctx, "list_files", dirpath=path) == OUTSIDE
    assert_untouched(outside)


def assert_untouched(outside: Path) -> None:
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "top secret"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_listing_a_symlinked_folder_does_not_follow_it(ctx: ToolContext, outside: Path) -> None:
    listing = await tool(ctx, "list_files", recursive=True)
    assert listing == "linkdir (symlink)\nlink.txt (symlink)"  # folders first, then files
    assert await tool(ctx, "list_files", dirpath="linkdir") == OUTSIDE


async def test_dot_dot_that_stays_inside_is_fine(ctx: ToolContext) -> None:
    assert (await tool(ctx, "write_file", filepath="a/../b.txt", content="x")).startswith("Wrote 1 characters")
    assert await tool(ctx, "read_file", filepath="b.txt") == "x"


async def test_write_creates_the_folder_and_parents(ctx: ToolContext) -> None:
    assert not ctx.workdir.exists()
    result = await tool(ctx, "write_file", filepath="deep/er/note.md", content="line 1\nline 2")
    assert result == "Wrote 13 characters (2 lines) to deep/er/note.md"
    assert (ctx.workdir / "deep/er/note.md").read_text(encoding="utf-8") == "line 1\nline 2"
    assert await tool(ctx, "write_file", filepath="deep", content="x") == "Error: deep is a folder; give a file path"


async def test_read_file_pages_a_big_file_with_a_navigation_footer(ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)), encoding="utf-8")

    first = await tool(ctx, "read_file", filepath="big.txt")
    body, footer = first.rsplit("\n\n", 1)
    assert body.splitlines() == [f"line {n}" for n in range(1, 201)]
    assert footer == "[lines 1–200 of 5 000; call read_file with offset=200 for more]"

    last = await tool(ctx, "read_file", filepath="big.txt", offset=4990, limit=50)
    assert last.endswith("line 5000\n\n[lines 4 991–5 000 of 5 000; end of file]")
    past = await tool(ctx, "read_file", filepath="big.txt", offset=6000)
    assert past == "Error: offset 6000 is past the end of big.txt (5 000 lines)"


async def test_read_file_keeps_the_footer_when_lines_are_huge(ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "wide.txt").write_text(("x" * 1500 + "\n") * 100, encoding="utf-8")
    result = await tool(ctx, "read_file", filepath="wide.txt")
    assert len(result) <= MAX_TOOL_OUTPUT  # not cut by the registry, so the footer survives
    shown = len(result.rsplit("\n\n", 1)[0].splitlines())
    assert result.endswith(f"[lines 1–{shown} of 100; call read_file with offset={shown} for more]")
    assert 20 < shown < 100


@pytest.mark.parametrize(("content", "expected"), [
    ("café\n".encode("latin-1"),
     "Error: odd.txt is not UTF-8 text (bad byte at position 3); read_file only reads text"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "Error: odd.txt looks like a binary file; read_file only reads UTF-8 text"),
    (b"", "(odd.txt is empty)"),
])
async def test_read_file_explains_unreadable_files(ctx: ToolContext, content: bytes, expected: str) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "odd.txt").write_bytes(content)
    assert await tool(ctx, "read_file", filepath="odd.txt") == expected


async def test_read_file_polite_errors(ctx: ToolContext) -> None:
    assert await tool(ctx, "read_file", filepath="nope.txt") == "Error: nope.txt does not exist"
    assert await tool(ctx, "read_file", filepath=".") == "Error: . is a folder; use list_files to see what is in it"
    assert (await tool(ctx, "read_file", filepath="x", offset="ten")).startswith("Error: offset must be a whole")
    assert (await tool(ctx, "read_file")).startswith("Error: bad arguments for read_file")


async def test_list_files_summarises_a_folder_of_500_files(ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    for n in range(300):
        (ctx.workdir / f"doc{n:03}.txt").write_text("x", encoding="utf-8")
    for n in range(200):
        (ctx.workdir / f"mod{n:03}.py").write_text("x", encoding="utf-8")

    listing = await tool(ctx, "list_files")
    lines = listing.splitlines()
    assert lines[:2] == ["500 entries: 500 files, 0 folders", "by extension: .txt 300, .py 200"]
    assert lines[3] == "first 200:"
    assert lines[4:204] == [f"doc{n:03}.txt (1 B)" for n in range(200)]
    assert lines[204:] == ["… and 300 more; list a subfolder to see them"]


async def test_recursive_listing_summary_counts_top_level_folders(ctx: ToolContext) -> None:
    for folder, count in (("src", 150), ("docs", 60)):
        (ctx.workdir / folder).mkdir(parents=True)
        for n in range(count):
            (ctx.workdir / folder / f"f{n:03}.md").write_text("x", encoding="utf-8")

    listing = await tool(ctx, "list_files", recursive=True)
    assert listing.splitlines()[:3] == [
        "212 entries: 210 files, 2 folders",
        "by extension: .md 210",
        "entries per top-level folder: src/ 150, docs/ 60",
    ]
    assert "docs/\nsrc/\ndocs/f000.md (1 B)" in listing


async def test_small_listing_is_plain(ctx: ToolContext) -> None:
    assert await tool(ctx, "list_files") == ". is empty"
    await tool(ctx, "write_file", filepath="sub/a.txt", content="hello")
    assert await tool(ctx, "list_files") == "sub/"
    assert await tool(ctx, "list_files", dirpath="sub") == "a.txt (5 B)"
    assert await tool(ctx, "list_files", dirpath="sub/a.txt") == "Error: sub/a.txt is a file; use read_file to read it"


def test_default_registry_declares_the_file_tools() -> None:
    specs = {t["function"]["name"]: t["function"] for t in default_registry().get_openai_tools()}
    assert set(specs) == {"read_file", "write_file", "list_files", "file_search", "read_document", "send_file"}
    assert specs["read_file"]["parameters"]["required"] == ["filepath"]
    assert specs["write_file"]["parameters"]["required"] == ["filepath", "content"]
