"""Links planted by a real sandboxed command (issue 28, point 1): the bot's own code, outside the sandbox,
then writes and reads nothing outside the chat folder.

The commands run under the real bubblewrap, as `shell` runs them after approval. A symlink's target text
may name any path on the machine even though the sandbox cannot see it; the bot is what would follow it.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from bot.agent.tools import shell
from bot.agent.tools.registry import ToolContext
from bot.chats.folders import remove_files
from bot.i18n import t
from bot.media.intake import MediaLimits, MediaRefused, save
from bot.media.vision import ImageParts
from bot.messages import Attachment
from bot.tree.model import AttachedFile, Message
from tests.agent.test_files import tool

SECRET = b"chat A said: the launch code is 1234"
LIMITS = MediaLimits(max_bytes=1_000_000, max_image_px=256, max_files=4)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder as the bot lays it out: the database beside chats/A (with an upload) and chats/B."""
    data = tmp_path / "data"
    (data / "chats" / "A" / "uploads").mkdir(parents=True)
    (data / "bothub.sqlite3").write_bytes(SECRET)
    (data / "chats" / "A" / "uploads" / "diary.txt").write_bytes(SECRET)
    return data


@pytest.fixture
def ctx(data: Path) -> ToolContext:
    return ToolContext(chat="test:B", workdir=data / "chats" / "B")


async def sandboxed(ctx: ToolContext, command: str) -> str:
    out = await shell.run_command(f"{command}; echo end", ctx, 20)
    assert out.startswith("exit code 0") and out.endswith("end"), out
    return out


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


async def chunks(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def upload(ctx: ToolContext, data: bytes, kind: str, name: str) -> AttachedFile:
    return await save(chunks(data), ctx.workdir, Attachment(kind, name, "", len(data), "h"), LIMITS, date(2026, 1, 2))


def everything_in(data: Path) -> dict[str, bytes]:
    return {str(p.relative_to(data)): p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file()}


async def test_uploads_swapped_for_a_link_are_refused_not_written_through(ctx: ToolContext, data: Path) -> None:
    for target in (data / "chats" / "A" / "uploads", data, Path("../..")):
        await sandboxed(ctx, f"rm -rf uploads; ln -s {target} uploads")
        before = everything_in(data)
        with pytest.raises(MediaRefused) as refused:
            await upload(ctx, b"hello from the user", "file", "notes.txt")
        assert refused.value.reason == "folder"
        assert "uploads/ in this chat's folder is not a real folder" in t("en", "media_folder", **refused.value.values)
        assert everything_in(data) == before  # nothing written anywhere, the temporary file included
    await sandboxed(ctx, "rm uploads")
    stored = await upload(ctx, b"hello again", "file", "notes.txt")  # a real folder again: it works
    assert (ctx.workdir / stored.path).read_bytes() == b"hello again"


async def vision_sees(ctx: ToolContext, stored: AttachedFile) -> list[dict[str, Any]]:
    """The parts the model would get for a user message that carried `stored`."""
    message = Message.new("user", "what is this?", "root", files=(stored,))
    item: dict[str, Any] = {"role": "user", "content": message.content}
    await ImageParts().apply([item], {id(item): message}, ctx.workdir)
    return list(item["content"])


async def test_a_stored_picture_replaced_by_a_link_or_a_hard_link_is_not_sent(ctx: ToolContext, data: Path) -> None:
    stored = await upload(ctx, png(), "image", "cat.png")
    assert [p["type"] for p in await vision_sees(ctx, stored)] == ["text", "image_url"]  # the real one is sent
    await sandboxed(ctx, f"cp {stored.path} orig.png")
    plants = (f"ln -sf {data}/bothub.sqlite3 {stored.path}",  # a symlink out of the folder
              f"rm {stored.path}; cp orig.png {stored.path}; mv uploads kept; ln -s kept uploads",  # same bytes
              f"rm uploads; mv kept uploads; echo other > other.png; ln -f other.png {stored.path}",  # hard link
              f"rm {stored.path}; cp orig.png {stored.path}; ln {stored.path} twin.png")  # same bytes, 2 names
    for plant in plants:
        await sandboxed(ctx, plant)
        assert [p["type"] for p in await vision_sees(ctx, stored)] == ["text"], plant
    await sandboxed(ctx, "rm twin.png")
    assert [p["type"] for p in await vision_sees(ctx, stored)] == ["text", "image_url"]  # one name again


async def test_the_sandbox_cannot_hard_link_a_file_from_outside_its_folder(ctx: ToolContext, data: Path) -> None:
    """Why a hard link planted by a command can only join files of its own folder (see bot/jail.py)."""
    out = await shell.run_command(f"ln /usr/bin/env h1; ln {data}/bothub.sqlite3 h2; ls", ctx, 20)
    assert "h1" not in out.splitlines()[-1] and "h2" not in out
    assert "Invalid cross-device link" in out or "Operation not permitted" in out


async def test_documents_and_sent_files_do_not_follow_planted_links(ctx: ToolContext, data: Path) -> None:
    sent: list[object] = []

    async def send_file(file: object) -> str:
        sent.append(file)
        return "sent"

    ctx = dataclasses.replace(ctx, send_file=send_file)
    await sandboxed(ctx, f"ln -s {data}/bothub.sqlite3 report.txt; ln -s {data}/chats/A/uploads docs; "
                         "echo mine > mine.txt; ln mine.txt twin.txt")
    for path in ("report.txt", "docs/diary.txt", "twin.txt"):
        for name in ("read_document", "send_file"):
            answer = await tool(ctx, name, filepath=path)
            assert answer.startswith("Error:") and "launch code" not in answer, (name, path, answer)
    assert sent == []


async def test_purge_removes_nothing_through_a_planted_link(ctx: ToolContext, data: Path) -> None:
    await sandboxed(ctx, f"ln -s {data}/chats/A/uploads uploads; ln -s {data}/bothub.sqlite3 gone.txt")
    assert remove_files(ctx.workdir, ("uploads/diary.txt", "gone.txt", "../A/uploads/diary.txt")) == 1
    assert (data / "chats" / "A" / "uploads" / "diary.txt").read_bytes() == SECRET
    assert (data / "bothub.sqlite3").read_bytes() == SECRET
    assert not (ctx.workdir / "gone.txt").is_symlink()  # the link itself went, its target stayed
