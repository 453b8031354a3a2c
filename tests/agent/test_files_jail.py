"""File-jail holes from the security review (issue 11, point 5): hard links, non-regular files, huge files."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from bot.agent.tools import files
from bot.agent.tools.registry import ToolContext
from tests.agent.test_files import tool


@pytest.fixture
def linked(tmp_path: Path, ctx: ToolContext) -> Path:
    """A file outside the chat folder and a hard link to it inside (same file system)."""
    secret = tmp_path / "bot-config.txt"
    secret.write_text("api_key: outside-secret\n", encoding="utf-8")
    ctx.workdir.mkdir()
    os.link(secret, ctx.workdir / "innocent.txt")
    return secret


async def test_a_hard_link_to_an_outside_file_is_neither_read_nor_written(ctx: ToolContext, linked: Path) -> None:
    refused = "Error: innocent.txt has other hard links, which may lead outside this chat's folder; refused"
    assert await tool(ctx, "read_file", filepath="innocent.txt") == refused
    assert await tool(ctx, "write_file", filepath="innocent.txt", content="pwned") == refused
    assert_unchanged(linked)


def assert_unchanged(secret: Path) -> None:
    assert secret.read_text(encoding="utf-8") == "api_key: outside-secret\n"


async def test_pipes_and_sockets_are_refused_without_hanging(ctx: ToolContext) -> None:
    ctx.workdir.mkdir()
    os.mkfifo(ctx.workdir / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(ctx.workdir / "sock"))
    try:
        for name in ("pipe", "sock"):
            refused = f"Error: {name} is not a regular file (a pipe, socket or device); refused"
            assert await tool(ctx, "read_file", filepath=name) == refused
            assert await tool(ctx, "write_file", filepath=name, content="x") == refused
    finally:
        server.close()


async def test_a_huge_file_is_refused_not_scanned(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_READ_BYTES", 1024)
    ctx.workdir.mkdir()
    (ctx.workdir / "big.log").write_text("line\n" * 1000, encoding="utf-8")
    assert await tool(ctx, "read_file", filepath="big.log") == \
        "Error: big.log is 4.9 KB; read_file reads files up to 1.0 KB"


async def test_written_files_are_private_and_ordinary_writes_still_work(ctx: ToolContext) -> None:
    assert (await tool(ctx, "write_file", filepath="sub/notes.md", content="hello")).startswith("Wrote 5")
    assert await tool(ctx, "write_file", filepath="sub/notes.md", content="hi") == \
        "Wrote 2 characters (1 lines) to sub/notes.md"
    assert_private_file(ctx.workdir / "sub" / "notes.md", "hi")  # replaced, not appended
    assert await tool(ctx, "read_file", filepath="sub/notes.md") == "hi"


def assert_private_file(path: Path, content: str) -> None:
    assert path.read_text(encoding="utf-8") == content
    assert path.stat().st_mode & 0o777 == 0o600
