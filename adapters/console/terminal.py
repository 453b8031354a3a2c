"""The console in a terminal: prompt_toolkit line editing and history (kept in the data dir), answers rendered
from Markdown above the prompt, the answer being written shown live under it, `/multiline` for longer messages.

Piped input never comes here (adapter.py reads it line by line, as a script). Ctrl-C stops a running answer
(`/stop`), and at an idle prompt leaves, like Ctrl-D."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_or_none
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.patch_stdout import patch_stdout

from adapters.console.markdown import style, to_terminal
from adapters.console.render import render
from bot.replies import Reply

MULTILINE = "/multiline"
LIVE_CHARS = 200  # how much of an answer still being written the bar under the prompt shows


class Terminal:
    def __init__(self, history: Path | None) -> None:
        self._history = history
        self.multiline = False
        self._writing: str | None = None  # the answer being written, until its final edit
        self._busy = asyncio.Event()  # set while an answer is on its way: Ctrl-C means /stop then

    def _store(self) -> History:
        if self._history is None:
            return InMemoryHistory()
        self._history.parent.mkdir(parents=True, exist_ok=True)
        return FileHistory(str(self._history))

    async def read(self, put: Callable[[str | None], Awaitable[None]]) -> None:
        """Feed each submitted message to `put`, then None at Ctrl-D (or Ctrl-C with nothing running)."""
        session: PromptSession[str] = PromptSession(history=self._store(), bottom_toolbar=self._bar)
        with patch_stdout(raw=True):
            while True:
                try:
                    line = await session.prompt_async("you> ", multiline=self.multiline)
                except EOFError:
                    break
                except KeyboardInterrupt:
                    if not self._busy.is_set():
                        break
                    line = "/stop"
                if line.strip().lower() == MULTILINE:
                    self._toggle_multiline()
                    continue
                await put(line)
        await put(None)

    def _toggle_multiline(self) -> None:
        self.multiline = not self.multiline
        print("multi-line on: Enter adds a line, Esc then Enter (or Alt+Enter) sends; /multiline again to end"
              if self.multiline else "multi-line off: Enter sends")

    def _bar(self) -> ANSI | None:
        if self._writing is None:
            return None
        tail = " ".join(self._writing.split())[-LIVE_CHARS:]
        return ANSI(f"{style('dim')}bot is writing… {tail}{style('reset')}")

    def show(self, reply: Reply, final: bool) -> None:
        """A final message is printed, rendered, above the prompt; a partial one only fills the bar."""
        if not final:
            self._writing = reply.text
            self._busy.set()
        else:
            self._writing = None
            self._busy.clear()
            text = render(reply) if reply.monospace else to_terminal(render(reply))  # /tree keeps its columns
            print(f"{style('bold')}bot>{style('reset')} {text}")
        if (app := get_app_or_none()) is not None:
            app.invalidate()
