"""Printing replies: a streamed answer grows in place on its line; a prompt left on screen is cleared."""

from __future__ import annotations

import asyncio
import uuid
from typing import TextIO

from adapters.console.render import render
from bot.messages import ChatRef, SentRef
from bot.replies import Reply

LINE_DONE_AFTER = 0.3  # seconds without new text before a streamed answer's line is closed (interactive)


class ConsoleOutput:
    def __init__(self, out: TextIO, interactive: bool) -> None:
        self._out = out
        self._interactive = interactive
        self._shown: dict[str, str] = {}  # sent message id → text printed so far
        self._open: str | None = None  # the message whose line is still being streamed
        self._closer: asyncio.TimerHandle | None = None
        self._prompting = False  # "you> " is the last thing on screen
        self.answers: frozenset[str] = frozenset()  # commands the buttons last shown start with ("/approve")
        self.asked = asyncio.Event()  # set when buttons are shown: a script's answer to them may go at once

    def banner(self, text: str) -> None:
        if self._interactive:
            self._out.write(text)
        self.prompt()
        self._out.flush()

    def close(self) -> None:
        if self._closer is not None:
            self._closer.cancel()
        self._out.write("\n" if self._open is not None or self._prompting else "")
        self._open, self._prompting = None, False
        self._out.flush()

    async def send(self, chat: ChatRef, reply: Reply) -> SentRef:
        self._end_line()
        ref = SentRef(chat, uuid.uuid4().hex)
        self._write(self._rendered(reply), ref.message_id)
        self._shown = {ref.message_id: reply.text}  # only the newest message is ever streamed into
        if reply.buttons:
            self.answers = frozenset(b.action.split(maxsplit=1)[0] for row in reply.buttons for b in row if b.action)
            self.asked.set()
        return ref

    async def edit(self, ref: SentRef, reply: Reply) -> None:
        before = self._shown.get(ref.message_id)
        if before is not None and reply.text.startswith(before):
            self._write(reply.text[len(before):], ref.message_id)  # streaming: print only what is new
        else:  # a rewrite: a new line, labelled like the message it replaces
            self._end_line()
            self._write(self._rendered(reply), ref.message_id)
        self._shown = {ref.message_id: reply.text}

    def _rendered(self, reply: Reply) -> str:
        return render(reply, prompt="bot> " if self._interactive else "")

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
            self.prompt()
        self._out.flush()

    def prompt(self) -> None:
        if self._interactive and not self._prompting:
            self._out.write("you> ")
            self._prompting = True
