"""The terminal console in this process, keys fed through prompt_toolkit's own pipe input: what reaches the
hub, /multiline, Ctrl-C as /stop while an answer runs and as leaving at an idle prompt, and the live bar.
(tests/e2e/test_console_terminal.py types into a real pty; that child process is not measured.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from adapters.console.terminal import LIVE_CHARS, Terminal
from bot.replies import Reply

ENTER, CTRL_C, CTRL_D = "\r", "\x03", "\x04"


@pytest.fixture
async def keys() -> AsyncIterator[PipeInput]:
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        yield pipe


async def reading(terminal: Terminal) -> tuple[asyncio.Task[None], asyncio.Queue[str | None]]:
    got: asyncio.Queue[str | None] = asyncio.Queue()
    return asyncio.create_task(terminal.read(got.put)), got


async def next_line(got: asyncio.Queue[str | None]) -> str | None:
    return await asyncio.wait_for(got.get(), 5)


async def test_lines_reach_the_hub_and_ctrl_d_leaves(keys: PipeInput, tmp_path: Path) -> None:
    history = tmp_path / "state" / "history"
    terminal = Terminal(history)
    task, got = await reading(terminal)
    keys.send_text("hello" + ENTER)
    assert await next_line(got) == "hello"
    keys.send_text(CTRL_D)
    assert await next_line(got) is None
    await asyncio.wait_for(task, 5)
    assert "hello" in history.read_text()  # kept for the next session's ↑


async def test_multiline_is_toggled_not_sent(keys: PipeInput) -> None:
    terminal = Terminal(None)
    task, got = await reading(terminal)
    keys.send_text("/MultiLine" + ENTER)
    await asyncio.sleep(0.2)
    assert terminal.multiline and got.empty()
    keys.send_text("line one\rline two\x1b\r")  # Enter adds a line; Esc then Enter sends
    assert await next_line(got) == "line one\nline two"
    keys.send_text("/multiline\x1b\r")
    await asyncio.sleep(0.2)
    assert not terminal.multiline
    keys.send_text(CTRL_D)
    assert await next_line(got) is None
    await asyncio.wait_for(task, 5)


async def test_ctrl_c_stops_a_running_answer_and_leaves_an_idle_prompt(keys: PipeInput) -> None:
    terminal = Terminal(None)
    task, got = await reading(terminal)
    terminal.show(Reply("half an answer"), final=False)  # an answer is being written
    keys.send_text(CTRL_C)
    assert await next_line(got) == "/stop"
    terminal.show(Reply("the answer"), final=True)
    keys.send_text(CTRL_C)
    assert await next_line(got) is None  # nothing running: Ctrl-C leaves
    await asyncio.wait_for(task, 5)


def test_the_bar_shows_the_tail_of_the_answer_being_written_and_goes_with_the_final(
        capsys: pytest.CaptureFixture[str]) -> None:
    terminal = Terminal(None)
    assert terminal._bar() is None
    words = " ".join(f"w{n}" for n in range(200))
    terminal.show(Reply(words.replace(" ", "\n  ")), final=False)  # line breaks and runs of blanks: one line
    bar = terminal._bar()
    assert bar is not None
    shown = "".join(text for _, text in bar.__pt_formatted_text__())
    assert shown.startswith("bot is writing… ") and shown.endswith(words[-LIVE_CHARS:])
    terminal.show(Reply("**done**"), final=True)
    assert terminal._bar() is None and "done" in capsys.readouterr().out
