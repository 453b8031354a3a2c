"""What a terminal shows, byte for byte, as replies are sent and streamed: at a person's terminal the prompt is
cleared before the bot writes, a stream grows in place printing only what is new, a rewrite starts a new line,
the line closes (prompt back) once the text stops; a script's transcript holds the replies alone."""

from __future__ import annotations

import asyncio
import io

import pytest

from adapters.console import outbound
from adapters.console.outbound import ConsoleOutput
from bot.messages import ChatRef
from bot.replies import Button, Reply

CHAT = ChatRef("console", "local")
CLEAR = "\r\033[K"


@pytest.fixture(autouse=True)
def plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(outbound, "LINE_DONE_AFTER", 0.05)


async def test_at_a_terminal_a_stream_grows_in_place_and_the_prompt_comes_back() -> None:
    screen = io.StringIO()
    out = ConsoleOutput(screen, interactive=True)
    out.banner("welcome\n")
    assert screen.getvalue() == "welcome\nyou> "
    ref = await out.send(CHAT, Reply("Hel"))
    await out.edit(ref, Reply("Hello"))
    assert screen.getvalue() == f"welcome\nyou> {CLEAR}bot> Hello"  # "lo" appended, nothing reprinted
    await out.edit(ref, Reply("Goodbye"))  # not a continuation: a new line, labelled as the bot's
    assert screen.getvalue().endswith(f"bot> Hello\nyou> {CLEAR}bot> Goodbye")
    await asyncio.sleep(0.2)  # the text stopped coming: the line is closed, the prompt is back
    assert screen.getvalue().endswith("Goodbye\nyou> ")
    await out.send(CHAT, Reply("Run it?", buttons=((Button("Yes", "/approve a1 once"), Button("No", "/deny a1")),)))
    assert screen.getvalue().endswith(f"you> {CLEAR}bot> Run it?\n  [Yes: /approve a1 once]   [No: /deny a1]")
    assert out.answers == frozenset({"/approve", "/deny"}) and out.asked.is_set()
    out.close()
    assert screen.getvalue().endswith("[No: /deny a1]\n")


async def test_a_scripts_transcript_holds_the_replies_alone() -> None:
    transcript = io.StringIO()
    out = ConsoleOutput(transcript, interactive=False)
    out.banner("welcome\n")
    first = await out.send(CHAT, Reply("one", title="Title"))
    await out.edit(first, Reply("one two"))
    await out.send(CHAT, Reply("three"))
    await asyncio.sleep(0.1)  # no line closing on a timer here
    out.close()
    assert transcript.getvalue() == "== Title ==\none two\nthree\n"
