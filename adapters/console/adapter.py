"""The local terminal chat: zero credentials, streaming output, and scriptable through piped stdin."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Mapping
from typing import TextIO

from adapters.console.inbound import is_exit, parse_line
from adapters.console.outbound import ConsoleOutput
from bot.adapter import Capabilities, MessageHandler
from bot.messages import ChatRef, SentRef
from bot.replies import Reply


class ConsoleAdapter:
    name = "console"
    capabilities = Capabilities(
        max_text=100_000, can_edit=True, edit_interval=0.05, group_edit_interval=0.05, buttons=False,
        tree_budget=6000, burst=10_000, rate=10_000.0, group_send_window=None, global_window=(1_000_000, 1.0),
        threads_paced_apart=False, replace_pressed=False, closes_streams=False,
        restart_when_down=False,
    )

    def __init__(self, chat: str, stdin: TextIO, stdout: TextIO) -> None:
        self.chat = chat
        self._in = stdin
        self._output = ConsoleOutput(stdout, interactive=stdin.isatty())
        self._closed = asyncio.Event()

    def connected(self) -> bool:
        return not self._closed.is_set()

    async def start(self, on_message: MessageHandler) -> None:
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[str | None] = asyncio.Queue()

        def read() -> None:  # a daemon thread: a blocked readline must never hold up shutdown
            for line in self._in:
                loop.call_soon_threadsafe(lines.put_nowait, line.rstrip("\n"))
            loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=read, name="console-stdin", daemon=True).start()
        self._pump = asyncio.create_task(self._dispatch(lines, on_message))
        self._output.banner(f"bothub console — chat {self.chat!r}. /help lists the commands, /exit quits.\n")

    async def _dispatch(self, lines: asyncio.Queue[str | None], on_message: MessageHandler) -> None:
        while (line := await lines.get()) is not None and not is_exit(line):
            if (msg := parse_line(self.chat, line)) is not None:
                await on_message(msg)
        self._closed.set()

    async def wait_closed(self) -> None:
        """Resolves at end of input or /exit."""
        await self._closed.wait()

    async def stop(self) -> None:
        self._output.close()

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        return await self._output.send(chat, reply)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        await self._output.edit(ref, reply)

    async def typing(self, chat: ChatRef) -> None:
        return None


def create(env: Mapping[str, str]) -> ConsoleAdapter:
    return ConsoleAdapter(env.get("BOTHUB_CONSOLE_CHAT", "local"), sys.stdin, sys.stdout)
