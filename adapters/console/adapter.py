"""The local terminal chat: zero credentials, streaming output, and scriptable through piped stdin."""

from __future__ import annotations

import asyncio
import sys
import threading
import uuid
from collections.abc import Mapping
from typing import TextIO

from bot.adapter import AdapterServices, Capabilities, MessageHandler
from bot.config import Config
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

EXIT_WORDS = {"/exit", "/quit"}
LINE_DONE_AFTER = 0.3  # seconds without new text before a streamed answer's line is closed (interactive)


class ConsoleAdapter:
    name = "console"
    capabilities = Capabilities(
        max_text=100_000, edit_interval=0.05, group_edit_interval=0.05, burst=10_000, rate=10_000.0,
        global_window=(1_000_000, 1.0), tree_budget=6000,
    )

    def __init__(self, chat: str, stdin: TextIO, stdout: TextIO) -> None:
        self.chat = chat
        self._in = stdin
        self._out = stdout
        self._interactive = stdin.isatty()
        self._closed = asyncio.Event()
        self._shown: dict[str, str] = {}  # sent message id → text printed so far
        self._open: str | None = None  # the message whose line is still being streamed
        self._closer: asyncio.TimerHandle | None = None
        self._prompting = False  # "you> " is the last thing on screen

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
        if self._interactive:
            self._out.write(f"bothub console — chat {self.chat!r}. /help lists the commands, /exit quits.\n")
        self._prompt()
        self._out.flush()

    async def _dispatch(self, lines: asyncio.Queue[str | None], on_message: MessageHandler) -> None:
        while (line := await lines.get()) is not None:
            if line.strip() in EXIT_WORDS:
                break
            if line.strip():
                await on_message(IncomingMessage(
                    platform="console", chat_id=self.chat, thread_id=None, message_id=uuid.uuid4().hex,
                    user_id="local", user_name="you", is_group=False, mentioned=True, text=line,
                ))
        self._closed.set()

    async def wait_closed(self) -> None:
        """Resolves at end of input or /exit."""
        await self._closed.wait()

    async def stop(self) -> None:
        if self._closer is not None:
            self._closer.cancel()
        self._out.write("\n" if self._open is not None or self._prompting else "")
        self._open, self._prompting = None, False
        self._out.flush()

    async def send(self, chat: ChatRef, reply: Reply) -> SentRef:
        self._end_line()
        ref = SentRef(chat, uuid.uuid4().hex)
        head = "bot> " if self._interactive else ""
        head += f"== {reply.title} ==\n" if reply.title else ""
        buttons = "".join("\n  " + "   ".join(f"[{b.label}: {b.action}]" for b in row) for row in reply.buttons)
        self._write(f"{head}{reply.text}{buttons}", ref.message_id)
        self._shown = {ref.message_id: reply.text}  # only the newest message is ever streamed into
        return ref

    async def edit(self, ref: SentRef, reply: Reply) -> None:
        before = self._shown.get(ref.message_id)
        if before is not None and reply.text.startswith(before):
            self._write(reply.text[len(before):], ref.message_id)  # streaming: print only what is new
        else:
            self._end_line()
            self._write(reply.text, ref.message_id)
        self._shown = {ref.message_id: reply.text}

    async def typing(self, chat: ChatRef) -> None:
        return None

    def _write(self, text: str, message_id: str) -> None:
        """Print part of a bot message; a prompt left on screen is cleared first."""
        if self._prompting:
            self._out.write("\r\033[K")
            self._prompting = False
        self._out.write(text)
        self._out.flush()
        self._open = message_id
        if self._interactive:  # the user types after an answer: close its line once the text stops coming
            if self._closer is not None:
                self._closer.cancel()
            self._closer = asyncio.get_running_loop().call_later(LINE_DONE_AFTER, self._end_line)

    def _end_line(self) -> None:
        if self._open is not None:
            self._out.write("\n")
            self._open = None
            self._prompt()
        self._out.flush()

    def _prompt(self) -> None:
        if self._interactive and not self._prompting:
            self._out.write("you> ")
            self._prompting = True


def create(config: Config, env: Mapping[str, str], services: AdapterServices) -> ConsoleAdapter:
    return ConsoleAdapter(env.get("BOTHUB_CONSOLE_CHAT", "local"), sys.stdin, sys.stdout)
