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
        self._prompt()

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
        self._end_line()
        self._out.flush()

    async def send(self, chat: ChatRef, reply: Reply) -> SentRef:
        self._end_line()
        ref = SentRef(chat, uuid.uuid4().hex)
        head = f"== {reply.title} ==\n" if reply.title else ""
        self._write(f"{head}{reply.text}")
        for row in reply.buttons:
            self._write("\n  " + "   ".join(f"[{b.label}: {b.action}]" for b in row))
        self._shown = {ref.message_id: reply.text}  # only the newest message is ever streamed into
        self._open = ref.message_id
        return ref

    async def edit(self, ref: SentRef, reply: Reply) -> None:
        before = self._shown.get(ref.message_id, "")
        if self._open == ref.message_id and reply.text.startswith(before):
            self._write(reply.text[len(before):])  # streaming: print only what is new
        else:
            self._end_line()
            self._write(reply.text)
            self._open = ref.message_id
        self._shown[ref.message_id] = reply.text

    async def typing(self, chat: ChatRef) -> None:
        return None

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def _end_line(self) -> None:
        if self._open is not None:
            self._write("\n")
            self._open = None
            self._prompt()

    def _prompt(self) -> None:
        if self._interactive:
            self._write("you> ")


def create(config: Config, env: Mapping[str, str], services: AdapterServices) -> ConsoleAdapter:
    return ConsoleAdapter(env.get("BOTHUB_CONSOLE_CHAT", "local"), sys.stdin, sys.stdout)
