"""Item 9: the console in a real pseudo-terminal, typed into: history (↑, kept in the data dir), Markdown shown
rendered, /multiline. Piped input is tests/e2e/test_console.py, unchanged."""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import struct
import sys
import termios
from pathlib import Path

from tests.fakes.openai_api import FakeOpenAI, Text
from tests.harness import answer_requests, wait_for


class Screen:
    """What the program wrote to its terminal, and keys typed into it."""

    def __init__(self, master: int) -> None:
        self.master, self.out = master, bytearray()
        asyncio.get_running_loop().add_reader(master, self._read)

    def _read(self) -> None:
        try:
            self.out += os.read(self.master, 65536)
        except OSError:  # the program ended: the terminal closed
            asyncio.get_running_loop().remove_reader(self.master)

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    async def shows(self, text: str) -> None:
        try:
            await wait_for(lambda: text.encode() in self.out, within=20)
        except AssertionError:
            raise AssertionError(f"{text!r} not shown; screen: {bytes(self.out)[-3000:]!r}") from None

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.master)
        os.close(self.master)


def last_user_text(fake: FakeOpenAI, n: int) -> str:
    return answer_requests(fake)[n]["body"]["messages"][-1]["content"]


async def test_history_markdown_and_multiline_in_a_terminal(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(Text("**bold** and `code`"))  # then the fake echoes
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = {**os.environ, "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "test-key", "BOTHUB_MODEL": "fake-model",
           "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    env.pop("NO_COLOR", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(tmp_path / "data"), "chat", stdin=slave, stdout=slave,
        stderr=slave, env=env, cwd=tmp_path)
    os.close(slave)
    screen = Screen(master)
    try:
        await screen.shows("you>")
        screen.type("first message\r")
        await screen.shows("\033[1mbold\033[0m and \033[36mcode\033[0m")  # rendered, not **bold**
        assert b"**bold**" not in screen.out
        screen.type("\033[A\r")  # ↑ recalls the last line (it once sent ^[[A to the model)
        await wait_for(lambda: len(answer_requests(fake)) == 2, within=20)
        assert last_user_text(fake, 1) == "first message"
        screen.type("/remind in 1s stretch\r")
        await screen.shows("Reminder: stretch")
        # printed above the prompt, which is drawn again below it (it was once printed over `you>`)
        await wait_for(lambda: b"you>" in bytes(screen.out).rsplit(b"Reminder: stretch", 1)[1], within=20)
        screen.type("/multiline\r")
        await screen.shows("multi-line on")
        screen.type("line one\rline two\033\r")  # Enter adds a line; Esc, Enter sends
        await wait_for(lambda: len(answer_requests(fake)) == 3, within=20)
        assert last_user_text(fake, 2) == "line one\nline two"
        await screen.shows("line two")
        screen.type("\x04")  # Ctrl-D leaves
        await asyncio.wait_for(proc.wait(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        screen.close()
    assert proc.returncode == 0
    history = (tmp_path / "data" / "console" / "local.history").read_text(encoding="utf-8")
    assert "+first message" in history and "+line one\n+line two" in history
