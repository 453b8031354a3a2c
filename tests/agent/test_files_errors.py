"""The file tools given what a model gets wrong: arguments of the wrong type, a path through a file, a folder that
is not there, a line too long to show whole, a recursive listing that stops counting at MAX_WALK."""

from __future__ import annotations

import pytest

from bot.agent.tools import files
from bot.agent.tools.registry import ToolContext
from tests.agent.test_files import tool


async def test_arguments_and_paths_the_model_gets_wrong(ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "a.txt").write_text("one line\n", encoding="utf-8")
    assert await tool(ctx, "read_file", filepath="a.txt", offset=[1]) == "Error: offset must be a whole number, got [1]"
    assert await tool(ctx, "read_file", filepath="a.txt", limit={"n": 2}) == (
        "Error: limit must be a whole number, got {'n': 2}")
    assert await tool(ctx, "write_file", filepath="b.txt", content=5) == "Error: content must be text"
    assert await tool(ctx, "write_file", filepath="n" * 300, content="x") == "Error: File name too long"
    assert await tool(ctx, "list_files", dirpath="gone") == "Error: gone does not exist"
    assert not (ctx.workdir / "b.txt").exists() and (ctx.workdir / "a.txt").read_text() == "one line\n"


async def test_a_line_too_long_is_cut_where_it_says(ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    (ctx.workdir / "min.js").write_text("short\n" + "y" * (files.MAX_LINE + 50) + "\n", encoding="utf-8")
    first, second = (await tool(ctx, "read_file", filepath="min.js")).split("\n")
    assert first == "short" and second == "y" * files.MAX_LINE + f" … [line cut at {files.MAX_LINE} characters]"


async def test_a_recursive_listing_stops_counting_at_max_walk(ctx: ToolContext,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_WALK", 30)
    monkeypatch.setattr(files, "MAX_ENTRIES", 10)
    for folder in ("a", "b"):
        (ctx.workdir / folder).mkdir(parents=True)
        for n in range(25):
            (ctx.workdir / folder / f"{n:02}.txt").write_text("x", encoding="utf-8")
    listing = await tool(ctx, "list_files", dirpath=".", recursive=True)
    assert listing.startswith("at least 30 entries: 28 files, 2 folders\n")
    assert listing.endswith("… and 20+ more; list a subfolder to see them")
