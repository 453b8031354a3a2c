"""The local terminal chat: zero credentials, streaming output, and scriptable through piped stdin.

Piped stdin is a script, read line by line in a thread, each line waiting for the answer before it; in a terminal
the input is a prompt_toolkit prompt instead (terminal.py), with the same dispatch behind it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from adapters.console.inbound import is_exit, is_interrupt, parse_line
from adapters.console.outbound import ConsoleOutput
from bot.adapter import AdapterServices, Capabilities, MessageHandler, NotKept, Share
from bot.i18n import t
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

if TYPE_CHECKING:
    from adapters.console.terminal import Terminal

Answered = Callable[[ChatRef], Awaitable[None]]
TREE_BUDGET = 3500  # a chat message's worth, so long runs collapse here as they do on the platforms
STOP_GRACE = 2.0  # seconds a line being handed to the hub gets at stop


class ConsoleAdapter:
    name = "console"
    files = None  # text only here, for now
    capabilities = Capabilities(
        max_text=100_000, can_edit=True, edit_interval=0.05, group_edit_interval=0.05, buttons=False, feedback=False,
        groups=False, overhears=False, refuses_sends=False,  # one to one only; sending never fails
        tree_budget=TREE_BUDGET, burst=10_000, rate=10_000.0, group_send_window=None, chat_send_window=None,
        global_window=(1_000_000, 1.0),
 edit_window=None,
 send_window=None,
        threads_paced_apart=False, interactions_paced_apart=False, replace_pressed=False, closes_streams=False,
        restart_when_down=False,
        reorders=False,
        columns=0,
    )

    def __init__(self, chat: str, stdin: TextIO, stdout: TextIO, answered: Answered | None = None,
                 history: Path | None = None, share: Share | None = None, language: str = "en") -> None:
        self.chat = chat
        self._share = share  # replicas: one console per chat, or its answers would print in the other one
        self._language = language
        self._stdout = stdout
        self._in = stdin
        self._output = ConsoleOutput(stdout, interactive=stdin.isatty())
        self._terminal: Terminal | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pump: asyncio.Task[None] | None = None
        self._lines: asyncio.Queue[str | None] | None = None  # kept across a restart with the thread filling it
        self._handing: asyncio.Future[None] | None = None  # a line being handed to the hub
        if stdin.isatty() and stdout.isatty():
            from adapters.console.terminal import Terminal  # prompt_toolkit: only for a person at a terminal

            self._terminal = Terminal(history)
        self._closed = asyncio.Event()
        # piped stdin is a script: each line waits until the one before it is answered
        self._answered = answered if not stdin.isatty() else None

    def connected(self) -> bool:
        return not self._closed.is_set()

    async def start(self, on_message: MessageHandler) -> None:
        if not await self._only_one():
            self._stdout.write(t(self._language, "console_open_elsewhere", chat=self.chat) + "\n")
            self._stdout.flush()
            self._closed.set()
            return
        self._closed.clear()
        first, lines = self._lines is None, self._lines or asyncio.Queue(maxsize=1)  # the reader waits for a taker
        self._lines = lines
        self._pump = asyncio.create_task(self._dispatch(lines, on_message))
        if self._terminal is not None:
            print(f"bothub console — chat {self.chat!r}. /help lists the commands, /multiline for longer "
                  "messages, ↑ for history, Ctrl-D quits.")
            self._reader = asyncio.create_task(self._terminal.read(lines.put))
            return
        if first:  # one reading thread for the adapter's life: a line it read before a restart is not lost
            threading.Thread(target=self._read, args=(lines, asyncio.get_running_loop()), name="console-stdin",
                             daemon=True).start()
        self._output.banner(f"bothub console — chat {self.chat!r}. /help lists the commands, /exit quits.\n")

    def _read(self, lines: asyncio.Queue[str | None], loop: asyncio.AbstractEventLoop) -> None:
        """A daemon thread: a blocked readline must never hold up shutdown."""
        try:
            for line in self._in:
                asyncio.run_coroutine_threadsafe(lines.put(line.rstrip("\n")), loop).result()
            asyncio.run_coroutine_threadsafe(lines.put(None), loop).result()
        except (RuntimeError, ValueError, concurrent.futures.CancelledError):
            return  # the loop or stdin closed under us (after a stop): bothub is exiting

    async def _only_one(self) -> bool:
        """Hold the chat's console role (one process holds it while it lives); False: another console has it."""
        if self._share is None:
            return True
        here = asyncio.Event()

        async def changed(held: frozenset[int]) -> None:
            if held:
                here.set()

        await self._share(f"console {self.chat}", 1, changed)
        return here.is_set()

    async def _dispatch(self, lines: asyncio.Queue[str | None], on_message: MessageHandler) -> None:
        held: list[str | None] = []  # a line read while an answer was running: it goes next
        while (line := held.pop() if held else await lines.get()) is not None and not is_exit(line):
            if (msg := parse_line(self.chat, line)) is None:
                continue
            if await self._hand_over(on_message, msg) and self._answered is not None:
                held += await self._until_answered(self._answered(msg.chat), lines, on_message)
        self._closed.set()

    async def _until_answered(self, answered: Awaitable[None], lines: asyncio.Queue[str | None],
                              on_message: MessageHandler) -> list[str | None]:
        """Wait for the answer. A `/stop` read meanwhile goes through at once, and so does a line answering
        buttons the answer shows (`/approve`, `/deny`: the answer waits for it); any other line is held back
        (and nothing more is read) until the answer is complete. Returns the held line, if any."""
        done = asyncio.ensure_future(answered)
        while True:
            following = asyncio.ensure_future(lines.get())
            try:
                await asyncio.wait((done, following), return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:  # a stop: no reader left behind to take the next line
                following.cancel()
                done.cancel()
                raise
            if not following.done():
                following.cancel()  # a cancelled Queue.get leaves its item in the queue
                return []
            line = following.result()
            if not is_interrupt(line) and not await self._answers_buttons(line, done):
                await done
                return [line]
            if (now := parse_line(self.chat, line or "")) is not None:
                await self._hand_over(on_message, now)

    async def _hand_over(self, on_message: MessageHandler, msg: IncomingMessage) -> bool:
        """Shielded from a stop: a line read is the hub's once this starts (stop waits for it). False when the hub
        could not keep it: the person is asked to send it again (a terminal has no redelivery)."""
        self._handing = asyncio.ensure_future(on_message(msg))
        try:
            await asyncio.shield(self._handing)
        except NotKept:
            self._stdout.write(t(self._language, "not_kept") + "\n")
            self._stdout.flush()
            return False
        return True

    async def _answers_buttons(self, line: str | None, answered: asyncio.Future[None]) -> bool:
        """True once buttons are on screen whose command `line` gives; False if the answer ends first."""
        first = (line or "").split(maxsplit=1)[:1]
        if not first or not first[0].startswith("/"):
            return False
        shown = asyncio.ensure_future(self._output.asked.wait())
        await asyncio.wait((answered, shown), return_when=asyncio.FIRST_COMPLETED)
        shown.cancel()
        if not self._output.asked.is_set() or first[0] not in self._output.answers:
            return False
        self._output.asked.clear()  # one answer per prompt
        return True

    async def wait_closed(self) -> None:
        """Resolves at end of input or /exit."""
        await self._closed.wait()

    async def stop(self) -> None:
        """A line being handed over reaches the hub first; then nothing more is read or dispatched (a restart
        reads on where this stopped)."""
        if self._handing is not None and not self._handing.done():
            await asyncio.wait({self._handing}, timeout=STOP_GRACE)
        for task in (self._pump, self._reader):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._pump = self._reader = None
        self._closed.set()
        if self._terminal is None:
            self._output.close()

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        if self._terminal is not None:
            self._terminal.show(reply, final)
            return SentRef(chat, uuid.uuid4().hex)
        return await self._output.send(chat, reply)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        if self._terminal is not None:
            self._terminal.show(reply, final)
            return
        await self._output.edit(ref, reply)

    async def typing(self, chat: ChatRef) -> None:
        return None


def create(env: Mapping[str, str], services: AdapterServices) -> ConsoleAdapter:
    history = env.get("BOTHUB_CONSOLE_HISTORY")  # set by `bothub run/chat`: <data dir>/console/<chat>.history
    return ConsoleAdapter(env.get("BOTHUB_CONSOLE_CHAT", "local"), sys.stdin, sys.stdout, services.answered,
                          Path(history) if history else None, services.share, services.language)
