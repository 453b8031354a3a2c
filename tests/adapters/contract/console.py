"""The terminal's driver: the adapter reads its stdin from a real pipe and prints to a real file, as under
`bothub chat < script > transcript`. Prints are flushed before send and edit return, so the file always
holds what the terminal shows: one line after another (a terminal cannot take text back).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

import pytest

from adapters.console import SPEC, ConsoleConfig
from bot.i18n import t
from bot.messages import ChatRef, SentRef
from tests.adapters.contract.driver import Driver, services


async def _answered_at_once(_chat: ChatRef) -> None:
    """No hub here: each scripted line counts as answered once it was handed over."""


def _streams() -> tuple[int, TextIO, TextIO, Path]:
    """(the pipe's write end, stdin: its read end, stdout: a file, that file's path)."""
    read_end, write_end = os.pipe()
    fd, name = tempfile.mkstemp(prefix="bothub-console-", suffix=".txt")
    return write_end, open(read_end, encoding="utf-8"), open(fd, "w", encoding="utf-8"), Path(name)


class ConsoleDriver(Driver):
    name, limit = "console", 100_000
    platform_can = frozenset({"can_edit"})  # one person at one terminal; buttons are printed as commands to type

    async def start(self) -> None:
        self._offered: dict[str, Any] = {}
        self._notices_read = 0
        self._stdin, self._in, self._out, self._transcript = _streams()
        with pytest.MonkeyPatch.context() as patch:  # the spec's create takes the process's own streams
            patch.setattr(sys, "stdin", self._in)
            patch.setattr(sys, "stdout", self._out)
            self.adapter = SPEC.create(ConsoleConfig(), {}, services([], answered=_answered_at_once))
        await self.adapter.start(self.inbox)

    async def stop(self) -> None:
        await self.adapter.stop()
        os.close(self._stdin)  # end of input: the reading threads and the dispatcher finish
        await asyncio.wait_for(self.adapter.wait_closed(), 5.0)  # type: ignore[attr-defined]
        self._in.close()
        self._out.close()
        self._transcript.unlink()

    async def inject(self, event: dict[str, Any]) -> None:
        os.write(self._stdin, (event["line"] + "\n").encode())

    async def press(self, event: dict[str, Any], pressed: SentRef) -> None:
        raise AssertionError("a terminal has no buttons: their commands are typed")

    async def offer(self, event: dict[str, Any]) -> None:
        self._offered = event
        await self.inject(event)

    async def offer_again(self) -> None:
        """The person read that it was not kept and types the line again."""
        self._notices_read = self._notices()
        await self.inject(self._offered)

    def confirmed(self) -> bool:
        """No notice printed that the line was not kept, since the person last read one."""
        return self._notices() <= self._notices_read

    def _notices(self) -> int:
        return self._transcript.read_text(encoding="utf-8").count(t("en", "not_kept"))

    def links(self) -> int:
        return int(self.adapter.connected())  # still reading the script and dispatching its lines

    async def shown(self, chat: ChatRef) -> list[str]:
        return [line for line in self._transcript.read_text(encoding="utf-8").split("\n") if line.strip()]
